package inspect

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const (
	uuid  = "37b3ce00-bf16-4fa6-8519-db89479745b6"
	uuid2 = "9e0c1a52-4d1b-4a55-9c7e-0f2b6c8d1e34"
	hex32 = "0123456789abcdef0123456789abcdef"
)

func TestParseName(t *testing.T) {
	tests := []struct {
		name   string
		ok     bool
		mark   string
		client string
		seq    int32
	}{
		{"_c_" + uuid + "-lock-0000000001", true, markLock, ClientCurator, 1},
		{"_c_" + uuid + "-__READ__0000000003", true, markRead, ClientCurator, 3},
		{"_c_" + uuid + "-__WRIT__0000000002", true, markWrite, ClientCurator, 2},
		{"_c_" + uuid + "-lease-0000000000", true, markLease, ClientCurator, 0},
		{"_c_" + uuid + "-latch-0000000007", true, markLatch, ClientCurator, 7},
		{"_c_" + hex32 + "-lock-0000000004", true, markLock, ClientGoZookeeper, 4},
		{hex32 + "__lock__0000000005", true, markKLock, ClientKazoo, 5},
		{hex32 + "__rlock__0000000006", true, markKRLock, ClientKazoo, 6},
		{"lock-0000000008", true, markLock, ClientOther, 8},
		{"_c_" + uuid + "-lock--2147483648", true, markLock, ClientCurator, -2147483648},
		{"_c_not-a-uuid-at-all-but-forty-chars-lon-lock-0000000001", true, markLock, ClientOther, 1},
		{"locks", false, "", "", 0},
		{"leases", false, "", "", 0},
		{"config", false, "", "", 0},
		{"lock-", false, "", "", 0},
		{"lock-+000000001", false, "", "", 0},
		{"lock-9999999999", false, "", "", 0}, // beyond int32
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, ok := parseName(tt.name)
			if ok != tt.ok {
				t.Fatalf("ok = %v, want %v", ok, tt.ok)
			}
			if ok && (p.mark != tt.mark || p.client != tt.client || p.seq != tt.seq) {
				t.Fatalf("got %+v, want mark %q client %q seq %d", p, tt.mark, tt.client, tt.seq)
			}
		})
	}
}

// node makes an ephemeral child of session owner with sequence seq.
func node(prefix, mark string, seq int32, owner int64) *Znode {
	return &Znode{Name: fmt.Sprintf("%s%s%010d", prefix, mark, seq), Owner: owner, Czxid: int64(seq) + 100,
		Ctime: time.Unix(1000, 0), Data: []byte("10.0.0.1")}
}

func cur(mark string, seq int32, owner int64) *Znode {
	return node("_c_"+uuid+"-", mark, seq, owner)
}

func dir(children ...*Znode) *Znode {
	return &Znode{Name: "d", Children: children, Loaded: true}
}

// seqs returns "role:seq" of each participant.
func seqs(ps []Participant) string {
	var out []string
	for _, p := range ps {
		out = append(out, fmt.Sprintf("%s:%d", p.Role, p.Seq))
	}
	return strings.Join(out, " ")
}

func TestClassify(t *testing.T) {
	tests := []struct {
		name    string
		dir     *Znode
		kinds   []string
		holders []string // per lock
		waiters []string
	}{
		{"empty", dir(), nil, nil, nil},
		{"foreign children only", dir(&Znode{Name: "config"}, &Znode{Name: "x"}), nil, nil, nil},
		{"mutex, listed out of order, foreign child ignored",
			dir(cur(markLock, 3, 3), &Znode{Name: "config"}, cur(markLock, 1, 1), cur(markLock, 2, 2)),
			[]string{KindMutex}, []string{"lock:1"}, []string{"lock:2 lock:3"}},
		{"mutex across the sequence wrap",
			dir(cur(markLock, -2147483648, 2), cur(markLock, 2147483647, 1)),
			[]string{KindMutex}, []string{"lock:2147483647"}, []string{"lock:-2147483648"}},
		{"go-zookeeper and Curator share lock-",
			dir(node("_c_"+hex32+"-", markLock, 2, 2), cur(markLock, 1, 1)),
			[]string{KindMutex}, []string{"lock:1"}, []string{"lock:2"}},
		{"readers share, a writer waits, a later reader waits behind it",
			dir(cur(markRead, 1, 1), cur(markRead, 2, 2), cur(markWrite, 3, 3), cur(markRead, 4, 4)),
			[]string{KindReadWrite}, []string{"read:1 read:2"}, []string{"write:3 read:4"}},
		{"writer first holds alone",
			dir(cur(markWrite, 1, 1), cur(markRead, 2, 2)),
			[]string{KindReadWrite}, []string{"write:1"}, []string{"read:2"}},
		{"downgrade: the read node takes its write node's number",
			dir(cur(markWrite, 5, 1), node("_c_00000000-0000-0000-0000-000000000000-", markRead, 5, 1), cur(markRead, 6, 2)),
			[]string{KindReadWrite}, []string{"write:5 read:5"}, []string{"read:6"}},
		{"the write holder's own later read node holds",
			dir(cur(markWrite, 5, 1), cur(markRead, 6, 1), cur(markRead, 7, 2)),
			[]string{KindReadWrite}, []string{"write:5 read:6"}, []string{"read:7"}},
		{"kazoo lock is a mutex",
			dir(node(hex32, markKLock, 2, 2), node(hex32, markKLock, 1, 1)),
			[]string{KindMutex}, []string{"lock:1"}, []string{"lock:2"}},
		{"kazoo read/write",
			dir(node(hex32, markKRLock, 1, 1), node(hex32, markKLock, 2, 2), node(hex32, markKRLock, 3, 3)),
			[]string{KindReadWrite}, []string{"read:1"}, []string{"write:2 read:3"}},
		{"latch",
			dir(cur(markLatch, 9, 2), cur(markLatch, 4, 1)),
			[]string{KindLatch}, []string{"latch:4"}, []string{"latch:9"}},
		{"V2 semaphore: leases held, gate nodes wait",
			dir(&Znode{Name: "leases", Loaded: true, Children: []*Znode{cur(markLease, 1, 1), cur(markLease, 0, 2)}},
				&Znode{Name: "locks", Loaded: true, Children: []*Znode{cur(markLock, 8, 3)}}),
			[]string{KindSemaphoreV2}, []string{"lease:0 lease:1"}, []string{"gate:8"}},
		{"V2 semaphore: the gate holder's newest lease waits",
			dir(&Znode{Name: "leases", Loaded: true, Children: []*Znode{cur(markLease, 1, 1), cur(markLease, 2, 2), cur(markLease, 3, 3)}},
				&Znode{Name: "locks", Loaded: true, Children: []*Znode{cur(markLock, 8, 3), cur(markLock, 9, 4)}}),
			[]string{KindSemaphoreV2}, []string{"lease:1 lease:2"}, []string{"lease:3 gate:8 gate:9"}},
		{"V2 semaphore: a lone lease of the gate holder is held",
			dir(&Znode{Name: "leases", Loaded: true, Children: []*Znode{cur(markLease, 1, 3)}},
				&Znode{Name: "locks", Loaded: true, Children: []*Znode{cur(markLock, 8, 3)}}),
			[]string{KindSemaphoreV2}, []string{"lease:1"}, []string{"gate:8"}},
		{"idle V2 semaphore",
			dir(&Znode{Name: "leases", Loaded: true}, &Znode{Name: "locks", Loaded: true}),
			[]string{KindSemaphoreV2}, []string{""}, []string{""}},
		{"a lone locks/ directory is not a V2 semaphore",
			dir(&Znode{Name: "locks", Loaded: true, Children: []*Znode{cur(markLock, 1, 1)}}),
			nil, nil, nil},
		{"two recipes on one path",
			dir(cur(markLock, 1, 1), cur(markLatch, 2, 2)),
			[]string{KindMutex, KindLatch}, []string{"lock:1", "latch:2"}, []string{"", ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			locks := Classify("/p", tt.dir)
			var kinds, holders, waiters []string
			for _, l := range locks {
				kinds = append(kinds, l.Kind)
				holders = append(holders, seqs(l.Holders))
				waiters = append(waiters, seqs(l.Waiters))
				if l.Path != "/p" {
					t.Fatalf("path %q", l.Path)
				}
			}
			if !reflect.DeepEqual(kinds, tt.kinds) || !reflect.DeepEqual(holders, tt.holders) || !reflect.DeepEqual(waiters, tt.waiters) {
				t.Fatalf("kinds %q holders %q waiters %q; want %q %q %q", kinds, holders, waiters, tt.kinds, tt.holders, tt.waiters)
			}
		})
	}
}

func TestParticipantFields(t *testing.T) {
	z := cur(markLock, 1, 0x1000a2b3c0000)
	l := Classify("/locks/a", dir(z))[0]
	p := l.Holders[0]
	want := "/locks/a/" + z.Name
	if p.Node != want || p.Name() != z.Name || p.Session != "0x1000a2b3c0000" || p.Token != 101 ||
		p.Host != "10.0.0.1" || p.Client != ClientCurator || !p.Created.Equal(time.Unix(1000, 0)) {
		t.Fatalf("got %+v", p)
	}
	z.Data = []byte("__REVOKE__")
	if p := Classify("/", dir(z))[0].Holders[0]; !p.Revoking || p.Host != "" || p.Node != "/"+z.Name {
		t.Fatalf("revoking: %+v", p)
	}
	z.Data = []byte{0, 1, 2}
	if p := Classify("/", dir(z))[0].Holders[0]; p.Host != "" {
		t.Fatalf("binary data shown as host %q", p.Host)
	}
}

func TestApplyMax(t *testing.T) {
	tests := []struct {
		name             string
		dir              *Znode
		max              int
		kind             string
		holders, waiters string
	}{
		{"V1: the first max hold", dir(cur(markLock, 1, 1), cur(markLock, 2, 2), cur(markLock, 3, 3)), 2,
			KindSemaphoreV1, "lock:1 lock:2", "lock:3"},
		{"max 1 is a mutex", dir(cur(markLock, 1, 1), cur(markLock, 2, 2)), 1, KindMutex, "lock:1", "lock:2"},
		{"V2: the lease beyond max waits, before the gate",
			dir(&Znode{Name: "leases", Loaded: true, Children: []*Znode{cur(markLease, 1, 1), cur(markLease, 2, 2), cur(markLease, 3, 3)}},
				&Znode{Name: "locks", Loaded: true, Children: []*Znode{cur(markLock, 7, 3), cur(markLock, 8, 4)}}),
			2, KindSemaphoreV2, "lease:1 lease:2", "lease:3 gate:7 gate:8"},
		{"latch unchanged", dir(cur(markLatch, 1, 1), cur(markLatch, 2, 2)), 2, KindLatch, "latch:1", "latch:2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := Classify("/p", tt.dir)[0]
			l.ApplyMax(tt.max, "test")
			if l.Kind != tt.kind || seqs(l.Holders) != tt.holders || seqs(l.Waiters) != tt.waiters {
				t.Fatalf("got %s %q %q", l.Kind, seqs(l.Holders), seqs(l.Waiters))
			}
		})
	}
}

func TestFindRecursive(t *testing.T) {
	root := dir(
		&Znode{Name: "b", Loaded: true, Children: []*Znode{cur(markLock, 1, 1)}},
		&Znode{Name: "a", Loaded: true, Children: []*Znode{
			&Znode{Name: "sem", Loaded: true, Children: []*Znode{
				{Name: "leases", Loaded: true, Children: []*Znode{cur(markLease, 1, 1)}},
				{Name: "locks", Loaded: true, Children: []*Znode{cur(markLock, 1, 1)}},
			}},
		}},
		&Znode{Name: "zookeeper", Loaded: true, Children: []*Znode{{Name: "quota", Loaded: true}}},
		&Znode{Name: "c", Children: nil}, // not loaded
	)
	var got []string
	for _, l := range Find("/", root, true) {
		got = append(got, l.Path+" "+l.Kind)
	}
	// Children come in the order given (Load sorts them); the V2's own
	// locks/ is not a second mutex.
	want := []string{"/b mutex", "/a/sem semaphore-v2"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	if n := len(Find("/", root, false)); n != 0 {
		t.Fatalf("not recursive: %d locks", n)
	}
}

func TestParseCons(t *testing.T) {
	text := ` /127.0.0.1:41234[1](queued=0,recved=12,sent=12,sid=0x1000a2b3c0000,lop=PING,est=1700000000000,to=10000,lcxid=0x3,lzxid=0x5,lresp=1,llat=0,minlat=0,avglat=0,maxlat=1)
 /127.0.0.1:41240[0](queued=0,recved=1,sent=0)
 /[0:0:0:0:0:0:0:1]:5000[1](queued=0,recved=1,sent=1,sid=0xff00000000000001)

`
	got, err := ParseCons(text)
	if err != nil {
		t.Fatal(err)
	}
	want := map[int64]string{0x1000a2b3c0000: "127.0.0.1:41234", -0xffffffffffffff: "[0:0:0:0:0:0:0:1]:5000"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	if _, err := ParseCons("cons is not executed because it is not in the whitelist.\n"); err != ErrFourLetterRefused {
		t.Fatalf("refused: %v", err)
	}
	if _, err := ParseCons(" /1.2.3.4:5[1](sid=0xnothex)"); err == nil {
		t.Fatal("bad sid accepted")
	}
}

func TestSessionsState(t *testing.T) {
	complete := &Sessions{addrs: map[int64]string{1: "h:1"}, Complete: true}
	partial := &Sessions{addrs: map[int64]string{1: "h:1"}}
	tests := []struct {
		name  string
		s     *Sessions
		id    int64
		state string
		addr  string
	}{
		{"listed", complete, 1, Connected, "h:1"},
		{"not listed, every server answered", complete, 2, Disconnected, ""},
		{"listed, a server did not answer", partial, 1, Connected, "h:1"},
		{"not listed, a server did not answer", partial, 2, Unknown, ""},
		{"no answer at all", nil, 1, Unknown, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, a := tt.s.State(tt.id)
			if st != tt.state || a != tt.addr {
				t.Fatalf("got %q %q, want %q %q", st, a, tt.state, tt.addr)
			}
		})
	}
}

func TestServers(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"127.0.0.1:2181", []string{"127.0.0.1:2181"}},
		{"a:1,b:2/chroot/x", []string{"a:1", "b:2"}},
		{"zk1, zk2:2182", []string{"zk1:2181", "zk2:2182"}},
		{"[::1]:2181/x", []string{"[::1]:2181"}},
	}
	for _, tt := range tests {
		if got := Servers(tt.in); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Servers(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestOrphans(t *testing.T) {
	s := &Sessions{addrs: map[int64]string{1: "h:1"}, Complete: true}
	root := dir(
		&Znode{Name: "locks", Loaded: true, Cversion: 4, Children: []*Znode{
			{Name: "a", Loaded: true, Cversion: 2, Children: []*Znode{cur(markLock, 1, 1), cur(markLock, 2, 2)}},
			{Name: "idle", Loaded: true, Cversion: 2},
		}},
		&Znode{Name: "old", Loaded: true, Cversion: 2},                             // empty parent
		&Znode{Name: "config", Loaded: true, Data: []byte{1}},                      // a leaf that never had children
		&Znode{Name: "count", Loaded: true, Data: []byte{0, 0, 0, 2}, Cversion: 1}, // data: not a directory
		&Znode{Name: "zookeeper", Loaded: true, Cversion: 1},
	)
	var got []string
	for _, o := range Orphans("/", root, s, time.Unix(2000, 0)) {
		got = append(got, o.Reason+" "+o.Node+" "+o.Session)
	}
	want := []string{
		"session-gone /locks/a/" + cur(markLock, 2, 2).Name + " 0x2",
		"empty-parent /locks/idle ",
		"empty-parent /old ",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q\nwant %q", got, want)
	}
	// Without every server's answer, no session can be called gone.
	partial := &Sessions{addrs: map[int64]string{1: "h:1"}}
	if n := len(Orphans("/", root, partial, time.Unix(2000, 0))); n != 2 {
		t.Fatalf("%d orphans with unknown sessions, want the empty parents only", n)
	}
}
