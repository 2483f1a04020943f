package cache

import (
	"hash/maphash"
	"strings"

	"github.com/go-zookeeper/zk"
)

// The cached tree is kept compact, because a cache of a million nodes is
// a use it must serve: a map keyed by full path with a zk.Stat and a
// children set per node came to 334 bytes a node, more than Curator's
// CuratorCache in the JVM. Here a node is one fixed-size slot in chunked
// slabs (no per-node object but its name and data, packed in one
// allocation), its children a linked list through the slots, and the
// index an open-addressing table of slot ids keyed by (parent, name),
// which holds no keys of its own: a path is found by walking its
// components from the root. Stat fields that are zero for nearly every
// node (EphemeralOwner, Aversion) are kept aside when they are not.

const (
	chunkBits = 10
	chunkLen  = 1 << chunkBits
	none      = int32(-1)
	freed     = int32(-2) // parent of a slot on the free list
)

// slot is a cached node.
type slot struct {
	buf                                     []byte // the node's name, then its data
	czxid, mzxid, pzxid, ctime, mtime       int64
	version, cversion, dataLen, numChildren int32
	// parent, first child, next and previous sibling; on the free list,
	// parent is freed and next links the list.
	parent, first, next, prev int32
	nameLen                   int32
}

// rare holds the Stat fields that are zero for most nodes.
type rare struct {
	ephemeralOwner int64
	aversion       int32
}

// store is the cached tree. It is not safe for concurrent use: the
// cache's mu guards it (reads under the read lock never change it).
type store struct {
	root   string // the cache's path
	prefix string // what a path below the root starts with
	noData bool   // StatsOnly: data is never kept
	seed   maphash.Seed

	chunks []*[chunkLen]slot
	used   int32 // slots handed out so far, freed ones included
	free   int32 // head of the free list
	count  int
	top    int32 // the root's slot, or none
	// index maps (parent, name) to a slot: entries are slot+1, 0 is
	// empty; its length is a power of two, at most 3/4 full.
	index []int32
	rares map[int32]rare
}

func newStore(root string, noData bool) *store {
	prefix := root + "/"
	if root == "/" {
		prefix = "/"
	}
	return &store{root: root, prefix: prefix, noData: noData, seed: maphash.MakeSeed(),
		free: none, top: none, rares: map[int32]rare{}}
}

// reset empties the store.
func (s *store) reset() { *s = *newStore(s.root, s.noData) }

func (s *store) len() int { return s.count }

func (s *store) at(id int32) *slot { return &s.chunks[id>>chunkBits][id&(chunkLen-1)] }

func (s *store) name(id int32) string {
	n := s.at(id)
	return string(n.buf[:n.nameLen])
}

// data is the node's data, shared: the returned slice cannot grow into
// anything else.
func (s *store) data(id int32) []byte {
	if s.noData {
		return nil
	}
	n := s.at(id)
	return n.buf[n.nameLen:len(n.buf):len(n.buf)]
}

func (s *store) stat(id int32) zk.Stat {
	n := s.at(id)
	st := zk.Stat{Czxid: n.czxid, Mzxid: n.mzxid, Pzxid: n.pzxid, Ctime: n.ctime, Mtime: n.mtime,
		Version: n.version, Cversion: n.cversion, DataLength: n.dataLen, NumChildren: n.numChildren}
	if r, ok := s.rares[id]; ok {
		st.EphemeralOwner, st.Aversion = r.ephemeralOwner, r.aversion
	}
	return st
}

func (s *store) setStat(id int32, st *zk.Stat) {
	n := s.at(id)
	n.czxid, n.mzxid, n.pzxid, n.ctime, n.mtime = st.Czxid, st.Mzxid, st.Pzxid, st.Ctime, st.Mtime
	n.version, n.cversion, n.dataLen, n.numChildren = st.Version, st.Cversion, st.DataLength, st.NumChildren
	if st.EphemeralOwner != 0 || st.Aversion != 0 {
		s.rares[id] = rare{st.EphemeralOwner, st.Aversion}
	} else {
		delete(s.rares, id)
	}
}

// setData replaces the node's data (the old slice, which events may
// hold, is left as it was).
func (s *store) setData(id int32, data []byte) {
	n := s.at(id)
	n.buf = s.pack(string(n.buf[:n.nameLen]), data)
}

func (s *store) pack(name string, data []byte) []byte {
	if s.noData {
		data = nil
	}
	b := make([]byte, len(name)+len(data))
	copy(b, name)
	copy(b[len(name):], data)
	return b
}

// find returns the slot of the node at path p, or none.
func (s *store) find(p string) int32 {
	if p == s.root {
		return s.top
	}
	rest, ok := strings.CutPrefix(p, s.prefix)
	if !ok {
		return none
	}
	id := s.top
	for id != none {
		name, tail, more := strings.Cut(rest, "/")
		id = s.child(id, name)
		if !more {
			return id
		}
		rest = tail
	}
	return none
}

// child returns the slot of parent's child name, or none.
func (s *store) child(parent int32, name string) int32 {
	if len(s.index) == 0 {
		return none
	}
	mask := len(s.index) - 1
	for i := s.hash(parent, name) & mask; ; i = (i + 1) & mask {
		e := s.index[i]
		if e == 0 {
			return none
		}
		if n := s.at(e - 1); n.parent == parent && string(n.buf[:n.nameLen]) == name {
			return e - 1
		}
	}
}

// children calls fn with each child's slot (in no order) until fn
// returns false; fn must not change the store.
func (s *store) children(id int32, fn func(int32) bool) {
	for k := s.at(id).first; k != none; k = s.at(k).next {
		if !fn(k) {
			return
		}
	}
}

// add caches a node: the root when parent is none, else parent's child
// name (which must not be cached).
func (s *store) add(parent int32, name string, data []byte, st *zk.Stat) int32 {
	id := s.alloc()
	n := s.at(id)
	*n = slot{buf: s.pack(name, data), parent: parent, first: none, next: none, prev: none, nameLen: int32(len(name))}
	s.setStat(id, st)
	s.count++
	if parent == none {
		s.top = id
		return id
	}
	p := s.at(parent)
	n.next = p.first
	if p.first != none {
		s.at(p.first).prev = id
	}
	p.first = id
	s.insert(id)
	return id
}

// remove drops a node that has no cached children.
func (s *store) remove(id int32) {
	n := s.at(id)
	if n.parent == none {
		s.top = none
	} else {
		s.unindex(id)
		if n.prev != none {
			s.at(n.prev).next = n.next
		} else {
			s.at(n.parent).first = n.next
		}
		if n.next != none {
			s.at(n.next).prev = n.prev
		}
	}
	delete(s.rares, id)
	*n = slot{parent: freed, next: s.free}
	s.free = id
	s.count--
}

func (s *store) alloc() int32 {
	if s.free != none {
		id := s.free
		s.free = s.at(id).next
		return id
	}
	if int(s.used) == len(s.chunks)*chunkLen {
		s.chunks = append(s.chunks, new([chunkLen]slot))
	}
	s.used++
	return s.used - 1
}

func (s *store) hash(parent int32, name string) int {
	h := maphash.String(s.seed, name) ^ uint64(uint32(parent))*0x9e3779b97f4a7c15
	h ^= h >> 32
	return int(h & (1<<62 - 1))
}

func (s *store) home(id int32) int {
	n := s.at(id)
	return s.hash(n.parent, string(n.buf[:n.nameLen])) & (len(s.index) - 1)
}

// insert adds id to the index.
func (s *store) insert(id int32) {
	if (s.count+1)*4 > len(s.index)*3 {
		s.grow(max(16, 2*len(s.index)))
	}
	mask := len(s.index) - 1
	i := s.home(id)
	for s.index[i] != 0 {
		i = (i + 1) & mask
	}
	s.index[i] = id + 1
}

func (s *store) grow(size int) {
	old := s.index
	s.index = make([]int32, size)
	mask := size - 1
	for _, e := range old {
		if e == 0 {
			continue
		}
		i := s.home(e - 1)
		for s.index[i] != 0 {
			i = (i + 1) & mask
		}
		s.index[i] = e
	}
}

// unindex removes id from the index, moving back the entries after it
// that its place kept from their home (no tombstones: lookups stay as
// short as the table's fill allows).
func (s *store) unindex(id int32) {
	mask := len(s.index) - 1
	i := s.home(id)
	for s.index[i] != id+1 {
		i = (i + 1) & mask
	}
	for {
		s.index[i] = 0
		j := i
		for {
			j = (j + 1) & mask
			e := s.index[j]
			if e == 0 {
				return
			}
			k := s.home(e - 1)
			// The entry at j stays if its home lies cyclically in (i, j].
			if i <= j && i < k && k <= j || i > j && (i < k || k <= j) {
				continue
			}
			s.index[i] = e
			i = j
			break
		}
	}
}

// compact rebuilds the store when it holds a quarter or less of the
// slots it grew to, so that a cache that shrank gives its memory back.
// Slot ids change: no caller may hold one across it.
func (s *store) compact() {
	if int(s.used) <= 4*chunkLen || s.count*4 > int(s.used) {
		return
	}
	t := newStore(s.root, s.noData)
	t.seed = s.seed
	if s.top != none {
		var copyTree func(from, parent int32)
		copyTree = func(from, parent int32) {
			st := s.stat(from)
			n := s.at(from)
			to := t.add(parent, string(n.buf[:n.nameLen]), n.buf[n.nameLen:], &st)
			for k := n.first; k != none; k = s.at(k).next {
				copyTree(k, to)
			}
		}
		copyTree(s.top, none)
	}
	*s = *t
}
