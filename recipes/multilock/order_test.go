package multilock

import (
	"errors"
	"testing"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/mutex"
	"github.com/gocurator/curator/recipes/rwlock"
	"github.com/gocurator/curator/recipes/semaphore"
)

func TestComparePaths(t *testing.T) {
	tests := []struct {
		a, b string
		want int // sign
	}{
		{"/a", "/a", 0},
		{"/a", "/b", -1},
		{"/b", "/a", 1},
		// A parent comes before its children, and segments compare as a
		// whole: "/a-b" sorts after "/a/z" although '-' < '/'.
		{"/a", "/a/b", -1},
		{"/a/z", "/a-b", -1},
		{"/a-b", "/a/z", 1},
		{"/locks/10", "/locks/9", -1},
	}
	for _, tt := range tests {
		got := comparePaths(tt.a, tt.b)
		if sign(got) != tt.want {
			t.Errorf("comparePaths(%q, %q) = %d, want sign %d", tt.a, tt.b, got, tt.want)
		}
	}
}

func sign(n int) int {
	switch {
	case n < 0:
		return -1
	case n > 0:
		return 1
	}
	return 0
}

// Members are acquired in one order whatever order they are given in, so
// two multi-locks of the same locks never wait for each other in a cycle.
func TestMembersInGlobalOrder(t *testing.T) {
	var c *framework.Client // no I/O here: the handles are only named
	rw := rwlock.New(c, "/b")
	given := [][]Member{
		{Mutex(mutex.New(c, "/c")), Read(rw), Lease(semaphore.New(c, "/a", 2)), Write(rw)},
		{Write(rw), Lease(semaphore.New(c, "/a", 2)), Mutex(mutex.New(c, "/c")), Read(rw)},
	}
	want := []string{"lease of /a", "write lock /b", "read lock /b", "mutex /c"}
	for i, ms := range given {
		sorted, err := arrange(ms)
		if err != nil {
			t.Fatalf("order %d: %v", i, err)
		}
		var got []string
		for _, m := range sorted {
			got = append(got, m.String())
		}
		if len(got) != len(want) {
			t.Fatalf("order %d: %v, want %v", i, got, want)
		}
		for j := range want {
			if got[j] != want[j] {
				t.Fatalf("order %d: %v, want %v", i, got, want)
			}
		}
	}
}

func TestMembersThatWouldWaitForEachOther(t *testing.T) {
	var c *framework.Client
	rw, rw2 := rwlock.New(c, "/rw"), rwlock.New(c, "/rw")
	m := mutex.New(c, "/m")
	sem := semaphore.New(c, "/s", 3)
	tests := []struct {
		name    string
		members []Member
		ok      bool
	}{
		{"write and read of one RWLock", []Member{Read(rw), Write(rw)}, true},
		{"leases of one semaphore", []Member{Lease(sem), Lease(sem), Lease(semaphore.New(c, "/s", 3))}, true},
		{"one mutex twice", []Member{Mutex(m), Mutex(m)}, false},
		{"two mutexes on one path", []Member{Mutex(m), Mutex(mutex.New(c, "/m"))}, false},
		{"write locks of two RWLocks", []Member{Write(rw), Write(rw2)}, false},
		{"write and read of two RWLocks", []Member{Write(rw), Read(rw2)}, false},
		{"a read lock twice", []Member{Read(rw), Read(rw)}, false},
		{"semaphore mutex twice", []Member{SemaphoreMutex(semaphore.NewMutex(c, "/sm")), SemaphoreMutex(semaphore.NewMutex(c, "/sm"))}, false},
		{"zero member", []Member{Mutex(m), {}}, false},
		{"no member", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := arrange(tt.members)
			if tt.ok && err != nil {
				t.Fatalf("refused: %v", err)
			}
			if !tt.ok && !errors.Is(err, ErrInvalidMembers) {
				t.Fatalf("err = %v, want ErrInvalidMembers", err)
			}
		})
	}
}
