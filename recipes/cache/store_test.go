package cache

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/framework"
)

// storeModel drives a store and a plain map of the same nodes side by
// side, and checks after every step that they agree.
type storeModel struct {
	t    *testing.T
	s    *store
	want map[string]zk.Stat // by path
	data map[string]string
}

func newStoreModel(t *testing.T, root string) *storeModel {
	return &storeModel{t: t, s: newStore(root, false), want: map[string]zk.Stat{}, data: map[string]string{}}
}

func (m *storeModel) add(p string, data string, st zk.Stat) {
	m.t.Helper()
	parent := none
	name := ""
	if p != m.s.root {
		var pp string
		pp, name = framework.SplitPath(p)
		parent = m.s.find(pp)
		if parent == none {
			m.t.Fatalf("add %s: parent %s not found", p, pp)
		}
	}
	m.s.add(parent, name, []byte(data), &st)
	m.want[p], m.data[p] = st, data
}

// removeTree removes p and everything below it, deepest first, as the
// cache does.
func (m *storeModel) removeTree(p string) {
	m.t.Helper()
	id := m.s.find(p)
	if id == none {
		m.t.Fatalf("remove %s: not found", p)
	}
	var rm func(p string, id int32)
	rm = func(p string, id int32) {
		for k := m.s.at(id).first; k != none; k = m.s.at(id).first {
			rm(framework.JoinPath(p, m.s.name(k)), k)
		}
		m.s.remove(id)
		delete(m.want, p)
		delete(m.data, p)
	}
	rm(p, id)
	m.s.compact()
}

func (m *storeModel) check() {
	m.t.Helper()
	if m.s.len() != len(m.want) {
		m.t.Fatalf("len %d, want %d", m.s.len(), len(m.want))
	}
	kids := map[string][]string{}
	for p, st := range m.want {
		id := m.s.find(p)
		if id == none {
			m.t.Fatalf("%s not found", p)
		}
		if got := m.s.stat(id); got != st {
			m.t.Fatalf("%s: stat %+v, want %+v", p, got, st)
		}
		if got := string(m.s.data(id)); got != m.data[p] {
			m.t.Fatalf("%s: data %q, want %q", p, got, m.data[p])
		}
		if p != m.s.root {
			pp, name := framework.SplitPath(p)
			kids[pp] = append(kids[pp], name)
			if m.s.find(p+"x") != none && m.want[p+"x"] == (zk.Stat{}) {
				m.t.Fatalf("%sx found, never added", p)
			}
		}
	}
	for p := range m.want {
		var got []string
		m.s.children(m.s.find(p), func(k int32) bool {
			got = append(got, m.s.name(k))
			return true
		})
		sort.Strings(got)
		want := kids[p]
		sort.Strings(want)
		if !slices.Equal(got, want) {
			m.t.Fatalf("children of %s: %q, want %q", p, got, want)
		}
	}
	if n := countIndex(m.s); n != len(m.want)-min(len(m.want), 1) {
		m.t.Fatalf("index holds %d entries, want %d", n, len(m.want)-1)
	}
}

func countIndex(s *store) int {
	n := 0
	for _, e := range s.index {
		if e != 0 {
			n++
		}
	}
	return n
}

func TestStoreFind(t *testing.T) {
	tests := []struct {
		root  string
		nodes []string // created in order
		find  map[string]bool
	}{
		{"/", []string{"/", "/a", "/a/b", "/c"}, map[string]bool{
			"/": true, "/a": true, "/a/b": true, "/c": true, "/b": false, "/a/c": false,
			"/a/b/c": false, "": false, "/a/": false, "a": false, "//a": false,
		}},
		{"/app", []string{"/app", "/app/x", "/app/x/y"}, map[string]bool{
			"/app": true, "/app/x": true, "/app/x/y": true, "/appx": false, "/ap": false,
			"/app/": false, "/app/y": false, "/x": false, "/": false,
		}},
		// A name equal to another node's name under another parent is
		// told apart by its parent.
		{"/r", []string{"/r", "/r/a", "/r/b", "/r/a/a", "/r/b/a"}, map[string]bool{
			"/r/a/a": true, "/r/b/a": true, "/r/a/b": false, "/r/b/b": false,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.root, func(t *testing.T) {
			m := newStoreModel(t, tt.root)
			for i, p := range tt.nodes {
				m.add(p, "d"+p, zk.Stat{Czxid: int64(i + 1), Mzxid: int64(i + 1)})
			}
			m.check()
			for p, want := range tt.find {
				if got := m.s.find(p) != none; got != want {
					t.Errorf("find(%q) = %v, want %v", p, got, want)
				}
			}
		})
	}
}

// Random adds and subtree removals against a map: the index (with its
// backward-shift deletion), the sibling lists, the rare stat fields and
// compaction never lose or invent a node.
func TestStoreMatchesAMap(t *testing.T) {
	for seed := range uint64(8) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 7))
			m := newStoreModel(t, "/root")
			m.add("/root", "", zk.Stat{Czxid: 1})
			paths := []string{"/root"}
			zxid := int64(1)
			for step := range 6000 {
				if r.IntN(3) > 0 || len(paths) == 1 {
					parent := paths[r.IntN(len(paths))]
					p := fmt.Sprintf("%s/%d", parent, r.IntN(40))
					if _, ok := m.want[p]; ok || strings.Count(p, "/") > 6 {
						continue
					}
					zxid++
					st := zk.Stat{Czxid: zxid, Mzxid: zxid, Pzxid: zxid, Ctime: zxid * 1000, Mtime: zxid * 1000,
						Version: int32(r.IntN(3)), DataLength: int32(len(p)), NumChildren: int32(r.IntN(5))}
					if r.IntN(4) == 0 {
						st.EphemeralOwner = int64(r.Uint64())
					}
					if r.IntN(8) == 0 {
						st.Aversion = 3
					}
					m.add(p, p, st)
					paths = append(paths, p)
				} else {
					i := 1 + r.IntN(len(paths)-1)
					m.removeTree(paths[i])
					paths = slices.DeleteFunc(paths, func(q string) bool { _, ok := m.want[q]; return !ok })
				}
				if step%500 == 0 {
					m.check()
				}
			}
			m.check()
			for len(paths) > 1 {
				m.removeTree(paths[len(paths)-1])
				paths = slices.DeleteFunc(paths, func(q string) bool { _, ok := m.want[q]; return !ok })
			}
			m.check()
		})
	}
}

// A store that shrank gives its slots back, and what is left is intact.
func TestStoreCompacts(t *testing.T) {
	m := newStoreModel(t, "/")
	m.add("/", "", zk.Stat{Czxid: 1})
	m.add("/big", "", zk.Stat{Czxid: 2})
	m.add("/keep", "k", zk.Stat{Czxid: 3, EphemeralOwner: 42})
	for i := range 20 * chunkLen {
		m.add(fmt.Sprintf("/big/%d", i), "x", zk.Stat{Czxid: int64(4 + i)})
	}
	if len(m.s.chunks) < 20 {
		t.Fatalf("%d chunks for %d nodes", len(m.s.chunks), m.s.len())
	}
	m.removeTree("/big")
	m.check()
	if len(m.s.chunks) != 1 || len(m.s.index) > 16 {
		t.Fatalf("after the subtree left: %d chunks, index of %d; want 1 and at most 16", len(m.s.chunks), len(m.s.index))
	}
}

// The setData and setStat of a node leave what an event already holds
// as it was.
func TestStoreDataIsNotOverwritten(t *testing.T) {
	s := newStore("/", false)
	id := s.add(none, "", []byte("one"), &zk.Stat{Czxid: 1})
	old := s.data(id)
	s.setData(id, []byte("two"))
	if string(old) != "one" || string(s.data(id)) != "two" {
		t.Fatalf("old %q, new %q", old, s.data(id))
	}
	if cap(old) != len(old) {
		t.Fatalf("data slice has room to grow into the store: len %d cap %d", len(old), cap(old))
	}
	st := newStore("/", true)
	id = st.add(none, "", []byte("one"), &zk.Stat{Czxid: 1, DataLength: 3})
	if st.data(id) != nil || st.stat(id).DataLength != 3 {
		t.Fatalf("stats only: data %q, length %d", st.data(id), st.stat(id).DataLength)
	}
}

// The store's own memory for a tree shaped as the benchmark's (names of
// a few digits, 11 bytes of data): slot, packed name and data, index.
func TestStoreBytesPerNode(t *testing.T) {
	const n = 100_000
	build := func() *store {
		s := newStore("/r", false)
		root := s.add(none, "", nil, &zk.Stat{Czxid: 1})
		data := []byte("watch-bench")
		tops := make([]int32, 0, n/10)
		for i := range n / 10 {
			tops = append(tops, s.add(root, fmt.Sprint("t", i), data, &zk.Stat{Czxid: 2}))
		}
		for i := range n - n/10 {
			s.add(tops[i%len(tops)], fmt.Sprint(i), data, &zk.Stat{Czxid: 3})
		}
		return s
	}
	before := liveHeap()
	s := build()
	after := liveHeap()
	per := float64(after-before) / float64(s.len())
	t.Logf("store: %.0f bytes per node (%d nodes)", per, s.len())
	// 104 bytes of slot, 16 or 24 of name and data, 4 to 8 of index.
	if per > 140 {
		t.Errorf("store: %.0f bytes per node, want at most 140", per)
	}
	runtime.KeepAlive(s)
}

func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}
