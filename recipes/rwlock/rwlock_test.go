package rwlock_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/rwlock"
)

func TestBadInput(t *testing.T) {
	c := testkit.Connect(t, zkAddr, testkit.Unique(t))
	ctx := testkit.Ctx(t)
	tests := []struct {
		name string
		c    *framework.Client
		path string
		want error
	}{
		{"nil client", nil, "/lock", rwlock.ErrNilClient},
		{"relative path", c, "lock", rwlock.ErrInvalidPath},
		{"empty path", c, "", rwlock.ErrInvalidPath},
		{"root", c, "/", rwlock.ErrInvalidPath},
		{"trailing slash", c, "/lock/", rwlock.ErrInvalidPath},
		{"empty segment", c, "/a//b", rwlock.ErrInvalidPath},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rw := rwlock.New(tt.c, tt.path)
			for _, k := range []*rwlock.Lock{rw.ReadLock(), rw.WriteLock()} {
				if err := k.Acquire(ctx); !errors.Is(err, tt.want) {
					t.Errorf("Acquire: %v, want %v", err, tt.want)
				}
				if ok, err := k.TryAcquire(ctx); ok || !errors.Is(err, tt.want) {
					t.Errorf("TryAcquire: %v, %v; want false, %v", ok, err, tt.want)
				}
				if _, err := k.Participants(ctx); !errors.Is(err, tt.want) {
					t.Errorf("Participants: %v, want %v", err, tt.want)
				}
				if err := k.Release(ctx); !errors.Is(err, rwlock.ErrNotHeld) {
					t.Errorf("Release: %v, want ErrNotHeld", err)
				}
			}
		})
	}
	if got := testkit.Children(t, c, "/"); len(got) != 0 {
		t.Fatalf("bad input created nodes: %v", got)
	}
}

func TestNotHeld(t *testing.T) {
	c := testkit.Connect(t, zkAddr, testkit.Unique(t))
	ctx := testkit.Ctx(t)
	rw := rwlock.New(c, "/lock")
	for _, k := range []*rwlock.Lock{rw.ReadLock(), rw.WriteLock()} {
		if err := k.Release(ctx); !errors.Is(err, rwlock.ErrNotHeld) {
			t.Errorf("Release without Acquire: %v, want ErrNotHeld", err)
		}
		if k.IsHeld() || !errors.Is(k.Err(), rwlock.ErrNotHeld) || k.FencingToken() != 0 || k.Node() != "" {
			t.Errorf("fresh lock: IsHeld %v, Err %v, FencingToken %d, Node %q", k.IsHeld(), k.Err(), k.FencingToken(), k.Node())
		}
		select {
		case <-k.Done():
		default:
			t.Error("Done of a lock never held is not closed")
		}
		//lint:ignore SA1012 a nil context is what is tested
		if err := k.Acquire(nil); !errors.Is(err, framework.ErrInvalidOption) {
			t.Errorf("Acquire(nil): %v, want ErrInvalidOption", err)
		}
	}
	r1, r2, w1, w2 := rw.ReadLock(), rw.ReadLock(), rw.WriteLock(), rw.WriteLock()
	if r1 != r2 || w1 != w2 || r1 == w1 {
		t.Fatal("ReadLock and WriteLock must each return one handle")
	}
}

func TestReentrancy(t *testing.T) {
	for _, side := range []string{"read", "write"} {
		t.Run(side, func(t *testing.T) {
			c := testkit.Connect(t, zkAddr, testkit.Unique(t))
			ctx := testkit.Ctx(t)
			rw := rwlock.New(c, "/lock")
			k := rw.ReadLock()
			if side == "write" {
				k = rw.WriteLock()
			}
			for i := 0; i < 3; i++ {
				if err := k.Acquire(ctx); err != nil {
					t.Fatalf("Acquire %d: %v", i, err)
				}
			}
			if ok, err := k.TryAcquire(ctx); !ok || err != nil {
				t.Fatalf("TryAcquire while held: %v, %v", ok, err)
			}
			if got := testkit.Children(t, c, "/lock"); len(got) != 1 {
				t.Fatalf("4 holds made nodes %v, want 1", got)
			}
			done := k.Done()
			for i := 0; i < 3; i++ {
				if err := k.Release(ctx); err != nil {
					t.Fatalf("Release %d: %v", i, err)
				}
				if !k.IsHeld() {
					t.Fatalf("not held after %d of 4 releases", i+1)
				}
			}
			select {
			case <-done:
				t.Fatal("Done closed while a hold remains")
			default:
			}
			if err := k.Release(ctx); err != nil {
				t.Fatalf("last Release: %v", err)
			}
			<-done
			if k.IsHeld() || !errors.Is(k.Err(), rwlock.ErrNotHeld) {
				t.Fatalf("after the last release: IsHeld %v, Err %v", k.IsHeld(), k.Err())
			}
			if got := testkit.Children(t, c, "/lock"); len(got) != 0 {
				t.Fatalf("nodes left after release: %v", got)
			}
			if err := k.Release(ctx); !errors.Is(err, rwlock.ErrNotHeld) {
				t.Fatalf("Release once too often: %v, want ErrNotHeld", err)
			}
		})
	}
}

func TestSharedAndExclusive(t *testing.T) {
	c := testkit.Connect(t, zkAddr, testkit.Unique(t))
	ctx := testkit.Ctx(t)
	a, b, w := rwlock.New(c, "/lock"), rwlock.New(c, "/lock"), rwlock.New(c, "/lock", rwlock.WithData([]byte("writer")))

	try := func(k *rwlock.Lock, want bool, what string) {
		t.Helper()
		if ok, err := k.TryAcquire(ctx); ok != want || err != nil {
			t.Fatalf("%s: TryAcquire = %v, %v; want %v", what, ok, err, want)
		}
	}
	try(a.ReadLock(), true, "first reader")
	try(b.ReadLock(), true, "second reader shares")
	try(w.WriteLock(), false, "writer while readers hold")
	if got := testkit.Children(t, c, "/lock"); len(got) != 2 {
		t.Fatalf("a failed TryAcquire left a node: %v", got)
	}
	for _, k := range []*rwlock.Lock{a.ReadLock(), b.ReadLock()} {
		if err := k.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
	try(w.WriteLock(), true, "writer alone")
	data, _, err := c.Get(ctx, w.WriteLock().Node())
	if err != nil || string(data) != "writer" {
		t.Fatalf("write node data = %q, %v; want WithData's", data, err)
	}
	try(a.ReadLock(), false, "reader while a writer holds")
	try(b.WriteLock(), false, "writer while a writer holds")
	if got := testkit.Children(t, c, "/lock"); len(got) != 1 {
		t.Fatalf("failed TryAcquires left nodes: %v", got)
	}
	tok := w.WriteLock().FencingToken()
	if err := w.WriteLock().Release(ctx); err != nil {
		t.Fatal(err)
	}
	try(b.WriteLock(), true, "next writer")
	if next := b.WriteLock().FencingToken(); next <= tok {
		t.Fatalf("fencing token of the next writer %d, want > %d", next, tok)
	}
	if err := b.WriteLock().Release(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestParticipants(t *testing.T) {
	c := testkit.Connect(t, zkAddr, testkit.Unique(t))
	ctx := testkit.Ctx(t)
	w1, r1, w2, r2 := rwlock.New(c, "/lock"), rwlock.New(c, "/lock"), rwlock.New(c, "/lock"), rwlock.New(c, "/lock")
	if err := w1.WriteLock().Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	wait := make([]<-chan error, 0, 3)
	for i, k := range []*rwlock.Lock{r1.ReadLock(), w2.WriteLock(), r2.ReadLock()} {
		wait = append(wait, acquireAsync(ctx, k))
		waitChildren(t, c, "/lock", i+2)
	}
	if _, err := c.Create(ctx, "/lock/foreign", nil); err != nil {
		t.Fatal(err)
	}
	writers, err := w2.WriteLock().Participants(ctx)
	if err != nil {
		t.Fatal(err)
	}
	readers, err := w2.ReadLock().Participants(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(writers) != 2 || writers[0] != w1.WriteLock().Node() || !strings.Contains(writers[1], "-__WRIT__") {
		t.Fatalf("write participants %v, want the holder %s first and one more writer", writers, w1.WriteLock().Node())
	}
	if len(readers) != 2 || seqOf(t, readers[0]) >= seqOf(t, readers[1]) || !strings.Contains(readers[0], "-__READ__") {
		t.Fatalf("read participants %v, want two readers in order", readers)
	}
	if err := w1.WriteLock().Release(ctx); err != nil {
		t.Fatal(err)
	}
	mustAcquired(t, wait[0], "first reader")
	if err := r1.ReadLock().Release(ctx); err != nil {
		t.Fatal(err)
	}
	mustAcquired(t, wait[1], "second writer")
	if err := w2.WriteLock().Release(ctx); err != nil {
		t.Fatal(err)
	}
	mustAcquired(t, wait[2], "second reader")
	if err := r2.ReadLock().Release(ctx); err != nil {
		t.Fatal(err)
	}
}

// A downgrade must not let a queued writer in (CURATOR-621): the read node
// takes the write node's place, so the writer keeps waiting until the
// downgraded read hold ends.
func TestDowngradeWithQueuedWriter(t *testing.T) {
	ns := testkit.Unique(t)
	ca, cb := testkit.Connect(t, zkAddr, ns), testkit.Connect(t, zkAddr, ns)
	ctx := testkit.Ctx(t)
	a, b := rwlock.New(ca, "/lock"), rwlock.New(cb, "/lock")
	if err := a.WriteLock().Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	wnode := a.WriteLock().Node()
	queued := acquireAsync(ctx, b.WriteLock())
	waitChildren(t, ca, "/lock", 2)

	start := time.Now()
	if err := a.ReadLock().Acquire(ctx); err != nil {
		t.Fatalf("downgrade: %v", err)
	}
	t.Logf("downgrade took %v", time.Since(start))
	rnode := a.ReadLock().Node()
	if seqOf(t, rnode) != seqOf(t, wnode) || !strings.Contains(rnode, "-__READ__") {
		t.Fatalf("downgrade node %s does not carry the sequence of %s", rnode, wnode)
	}
	st, err := ca.Exists(ctx, rnode)
	if err != nil || st == nil || st.EphemeralOwner != ca.SessionID() {
		t.Fatalf("downgrade node %s: stat %+v, %v; want an ephemeral of our session", rnode, st, err)
	}
	if err := a.WriteLock().Release(ctx); err != nil {
		t.Fatal(err)
	}
	if !a.ReadLock().IsHeld() {
		t.Fatal("releasing the write lock ended the downgraded read hold")
	}

	// The writer wakes on the write node's deletion, lists again and must
	// settle on watching our read node.
	testkit.Eventually(t, "queued writer watching the downgraded read node", func() bool {
		return sameSessions(watchers(t)["/"+ns+rnode], cb.SessionID())
	})
	pending(t, queued, "queued writer during the downgraded read hold")

	// Upgrading is refused at once, and makes no node. "At once" by
	// outcome, not by a stopwatch: an upgrade that waited would wait for
	// our own read hold, which only ends below, so it could only end with
	// its context (DeadlineExceeded), never with ErrUpgradeNotSupported.
	if err := a.WriteLock().Acquire(ctx); !errors.Is(err, rwlock.ErrUpgradeNotSupported) {
		t.Fatalf("upgrade: %v, want ErrUpgradeNotSupported", err)
	}
	if ok, err := a.WriteLock().TryAcquire(ctx); ok || !errors.Is(err, rwlock.ErrUpgradeNotSupported) {
		t.Fatalf("upgrade with TryAcquire: %v, %v; want false, ErrUpgradeNotSupported", ok, err)
	}
	if got := testkit.Children(t, ca, "/lock"); len(got) != 2 {
		t.Fatalf("refused upgrade left nodes: %v", got)
	}
	pending(t, queued, "queued writer during the downgraded read hold")

	if err := a.ReadLock().Release(ctx); err != nil {
		t.Fatal(err)
	}
	mustAcquired(t, queued, "queued writer after the read hold")
	if err := b.WriteLock().Release(ctx); err != nil {
		t.Fatal(err)
	}
}

// Downgrade keeps both holds reentrant and independent; releasing the read
// hold first leaves the write hold.
func TestDowngradeReleaseOrders(t *testing.T) {
	c := testkit.Connect(t, zkAddr, testkit.Unique(t))
	ctx := testkit.Ctx(t)
	rw, other := rwlock.New(c, "/lock"), rwlock.New(c, "/lock")
	if err := rw.WriteLock().Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		if ok, err := rw.ReadLock().TryAcquire(ctx); !ok || err != nil {
			t.Fatalf("downgrade %d with TryAcquire: %v, %v", i, ok, err)
		}
	}
	if err := rw.WriteLock().Acquire(ctx); err != nil {
		t.Fatalf("write reentry while downgraded: %v", err)
	}
	for i := 0; i < 2; i++ {
		if err := rw.ReadLock().Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if ok, err := other.ReadLock().TryAcquire(ctx); ok || err != nil {
		t.Fatalf("another reader while the write lock is held: %v, %v", ok, err)
	}
	for i := 0; i < 2; i++ {
		if !rw.WriteLock().IsHeld() {
			t.Fatal("write hold ended early")
		}
		if err := rw.WriteLock().Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if got := testkit.Children(t, c, "/lock"); len(got) != 0 {
		t.Fatalf("nodes left: %v", got)
	}
}

func TestUpgradeNotSupported(t *testing.T) {
	c := testkit.Connect(t, zkAddr, testkit.Unique(t))
	ctx := testkit.Ctx(t)
	rw := rwlock.New(c, "/lock")
	if err := rw.ReadLock().Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- rw.WriteLock().Acquire(ctx) }()
	select {
	case err := <-done:
		if !errors.Is(err, rwlock.ErrUpgradeNotSupported) {
			t.Fatalf("upgrade: %v, want ErrUpgradeNotSupported", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("upgrade blocked (Curator's deadlock) instead of failing at once")
	}
	if got := testkit.Children(t, c, "/lock"); len(got) != 1 {
		t.Fatalf("refused upgrade left nodes: %v", got)
	}
	if err := rw.ReadLock().Release(ctx); err != nil {
		t.Fatal(err)
	}
	if err := rw.WriteLock().Acquire(ctx); err != nil {
		t.Fatalf("write after the read hold ended: %v", err)
	}
	if err := rw.WriteLock().Release(ctx); err != nil {
		t.Fatal(err)
	}
}

// A read acquire of an RWLock whose own write acquire is queued ahead of it
// is granted once that write lock is held, as Curator grants the read lock
// to the write lock's owner, rather than waiting for the write release.
func TestReadBehindOwnWrite(t *testing.T) {
	c := testkit.Connect(t, zkAddr, testkit.Unique(t))
	ctx := testkit.Ctx(t)
	rw, reader := rwlock.New(c, "/lock"), rwlock.New(c, "/lock")
	if err := reader.ReadLock().Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	write := acquireAsync(ctx, rw.WriteLock())
	waitChildren(t, c, "/lock", 2)
	read := acquireAsync(ctx, rw.ReadLock())
	waitChildren(t, c, "/lock", 3)
	pending(t, read, "read behind our own queued write")
	if err := reader.ReadLock().Release(ctx); err != nil {
		t.Fatal(err)
	}
	mustAcquired(t, write, "write")
	mustAcquired(t, read, "read behind our own held write")
	if !rw.WriteLock().IsHeld() {
		t.Fatal("write hold ended")
	}
	for _, k := range []*rwlock.Lock{rw.WriteLock(), rw.ReadLock()} {
		if err := k.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// Children that are no lock recipe's participants are ignored (Curator
// Tech Note 7). A mutex's node is another matter: the path holds another
// recipe's layout, which is refused (TestMutexAndReadWriteLockRefuseEachOther
// in package mutex).
func TestForeignChildrenIgnored(t *testing.T) {
	c := testkit.Connect(t, zkAddr, testkit.Unique(t))
	ctx := testkit.Ctx(t)
	for _, name := range []string{"/lock/config", "/lock/_c_x-lease-0000000000", "/lock/zz"} {
		if _, err := c.Create(ctx, name, nil, framework.CreatingParents()); err != nil {
			t.Fatal(err)
		}
	}
	rw := rwlock.New(c, "/lock")
	for _, k := range []*rwlock.Lock{rw.WriteLock(), rw.ReadLock()} {
		if ok, err := k.TryAcquire(ctx); !ok || err != nil {
			t.Fatalf("%v, %v with foreign children", ok, err)
		}
	}
	for _, k := range []*rwlock.Lock{rw.WriteLock(), rw.ReadLock()} {
		if err := k.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if got := fmt.Sprint(testkit.Children(t, c, "/lock")); strings.Contains(got, "__") {
		t.Fatalf("lock nodes left: %s", got)
	}
}

// A downgrade whose write node was deleted behind the hold's back (by an
// operator) must not trust its read node, nor try the same downgrade
// forever: it falls back to an ordinary read node.
func TestDowngradeAfterWriteNodeDeleted(t *testing.T) {
	c := testkit.Connect(t, zkAddr, testkit.Unique(t))
	ctx, cancel := context.WithTimeout(testkit.Ctx(t), 5*time.Second)
	defer cancel()
	rw, other := rwlock.New(c, "/lock"), rwlock.New(c, "/lock")
	if err := rw.WriteLock().Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	wnode := rw.WriteLock().Node()
	if err := c.Delete(ctx, wnode); err != nil {
		t.Fatal(err)
	}
	if err := other.WriteLock().Acquire(ctx); err != nil { // the lock is free on the server
		t.Fatal(err)
	}
	if ok, err := rw.ReadLock().TryAcquire(ctx); ok || err != nil {
		t.Fatalf("read under another writer, own write node gone: %v, %v; want false, nil", ok, err)
	}
	if err := other.WriteLock().Release(ctx); err != nil {
		t.Fatal(err)
	}
	if err := rw.ReadLock().Acquire(ctx); err != nil {
		t.Fatalf("read after the other writer: %v", err)
	}
	if rnode := rw.ReadLock().Node(); seqOf(t, rnode) == seqOf(t, wnode) {
		t.Fatalf("read node %s reuses the deleted write node's sequence", rnode)
	}
	for _, k := range []*rwlock.Lock{rw.ReadLock(), rw.WriteLock()} {
		if err := k.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if got := testkit.Children(t, c, "/lock"); len(got) != 0 {
		t.Fatalf("nodes left: %v", got)
	}
}
