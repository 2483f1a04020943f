package rwlock_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gocurator/curator/connstate"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/rwlock"
	"github.com/gocurator/curator/zktest"
)

// A cancelled or timed-out acquire leaves no node behind (CURATOR-79,
// CURATOR-205): later contenders would wait on it forever.
func TestAbortedAcquireLeavesNoNode(t *testing.T) {
	tests := []struct {
		name         string
		holder, late string // "read" or "write"
		cancel       bool   // cancel instead of a deadline
	}{
		{"reader behind a writer, deadline", "write", "read", false},
		{"reader behind a writer, cancel", "write", "read", true},
		{"writer behind a reader, deadline", "read", "write", false},
		{"writer behind a writer, cancel", "write", "write", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := testkit.Connect(t, zkAddr, testkit.Unique(t))
			ctx := testkit.Ctx(t)
			holder, late := rwlock.New(c, "/lock"), rwlock.New(c, "/lock")
			side := func(rw *rwlock.RWLock, s string) *rwlock.Lock {
				if s == "write" {
					return rw.WriteLock()
				}
				return rw.ReadLock()
			}
			if err := side(holder, tt.holder).Acquire(ctx); err != nil {
				t.Fatal(err)
			}
			var (
				actx   context.Context
				cancel context.CancelFunc
				want   error
			)
			if tt.cancel {
				actx, cancel = context.WithCancel(ctx)
				want = context.Canceled
			} else {
				actx, cancel = context.WithTimeout(ctx, 300*time.Millisecond)
				want = context.DeadlineExceeded
			}
			defer cancel()
			k := side(late, tt.late)
			res := acquireAsync(actx, k)
			waitChildren(t, c, "/lock", 2)
			if tt.cancel {
				cancel()
			}
			if err := result(t, res, "aborted acquire"); !errors.Is(err, want) {
				t.Fatalf("aborted acquire: %v, want %v", err, want)
			}
			// Usually gone before Acquire returns; but when ctx ends while
			// the create is still in flight, the framework deletes the node
			// once its reply comes, in the background.
			waitChildren(t, c, "/lock", 1) // only the holder's node left
			if k.IsHeld() || k.FencingToken() != 0 {
				t.Fatal("aborted acquire holds")
			}
			if err := k.Release(ctx); !errors.Is(err, rwlock.ErrNotHeld) {
				t.Fatalf("Release after an aborted acquire: %v, want ErrNotHeld", err)
			}
			if err := side(holder, tt.holder).Release(ctx); err != nil {
				t.Fatal(err)
			}
			if err := k.Acquire(ctx); err != nil {
				t.Fatalf("acquire after the holder left: %v", err)
			}
			if err := k.Release(ctx); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// A holder cut off from ZooKeeper is told at once (StandardPolicy: on
// Suspended); its node goes with the session, and the lock passes on.
func TestHolderLoss(t *testing.T) {
	ns := testkit.Unique(t)
	proxy := zktest.NewProxy(t, zkAddr)
	ca := testkit.Connect(t, proxy.Addr(), ns,
		framework.WithSessionTimeout(2*time.Second), framework.WithErrorPolicy(connstate.StandardPolicy{}))
	cb := testkit.Connect(t, zkAddr, ns)
	ctx := testkit.Ctx(t)
	a, b := rwlock.New(ca, "/lock"), rwlock.New(cb, "/lock")
	if err := a.WriteLock().Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	if err := a.ReadLock().Acquire(ctx); err != nil { // downgrade: two holds to lose
		t.Fatal(err)
	}
	waiting := acquireAsync(ctx, b.WriteLock())
	waitChildren(t, cb, "/lock", 3)

	proxy.Cut()
	for _, k := range []*rwlock.Lock{a.WriteLock(), a.ReadLock()} {
		testkit.WaitClosed(t, k.Done(), "Done after the connection was cut")
		if !errors.Is(k.Err(), rwlock.ErrLockLost) || k.IsHeld() || k.FencingToken() != 0 {
			t.Fatalf("after the cut: Err %v, IsHeld %v, FencingToken %d", k.Err(), k.IsHeld(), k.FencingToken())
		}
	}
	// The server expires the partitioned session; its nodes go, and the
	// waiting writer gets the lock.
	mustAcquired(t, waiting, "writer after the holder's session expired")
	proxy.Restore()
	for _, k := range []*rwlock.Lock{a.WriteLock(), a.ReadLock()} {
		if err := k.Release(ctx); !errors.Is(err, rwlock.ErrLockLost) {
			t.Fatalf("Release of a lost hold: %v, want ErrLockLost", err)
		}
		if err := k.Release(ctx); !errors.Is(err, rwlock.ErrNotHeld) {
			t.Fatalf("second Release of a lost hold: %v, want ErrNotHeld", err)
		}
	}
	if err := b.WriteLock().Release(ctx); err != nil {
		t.Fatal(err)
	}
	// The lost client recovers with a new session and can lock again.
	if err := a.ReadLock().Acquire(ctx); err != nil {
		t.Fatalf("acquire after recovery: %v", err)
	}
	if err := a.ReadLock().Release(ctx); err != nil {
		t.Fatal(err)
	}
}

// Cancelling a waiting acquire while the connection is down still leaves
// no node once the connection is back (pitfall 2).
func TestCancelDuringConnectionLoss(t *testing.T) {
	ns := testkit.Unique(t)
	proxy := zktest.NewProxy(t, zkAddr)
	ca := testkit.Connect(t, proxy.Addr(), ns)
	cb := testkit.Connect(t, zkAddr, ns)
	ctx := testkit.Ctx(t)
	a, b := rwlock.New(ca, "/lock"), rwlock.New(cb, "/lock")
	if err := b.WriteLock().Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	actx, cancel := context.WithCancel(ctx)
	defer cancel()
	res := acquireAsync(actx, a.ReadLock())
	waitChildren(t, cb, "/lock", 2)

	suspended := make(chan struct{})
	stop := ca.Listen(func(s connstate.State) {
		if s == connstate.Suspended {
			select {
			case <-suspended:
			default:
				close(suspended)
			}
		}
	})
	defer stop()
	proxy.Cut()
	testkit.WaitClosed(t, suspended, "Suspended after the cut")
	cancel()
	proxy.Restore()
	if err := result(t, res, "acquire cancelled while disconnected"); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled acquire: %v, want context.Canceled", err)
	}
	waitChildren(t, cb, "/lock", 1) // the cancelled reader's node deleted
	if ca.SessionID() == 0 {
		t.Fatal("no session after restore")
	}
	if err := b.WriteLock().Release(ctx); err != nil {
		t.Fatal(err)
	}
}

// A lost reply to the create of a read node must not leave a second node
// that the reader would then wait behind (pitfall 1).
func TestLostCreateReply(t *testing.T) {
	for _, side := range []string{"read", "write"} {
		t.Run(side, func(t *testing.T) {
			ns := testkit.Unique(t)
			proxy := zktest.NewProxy(t, zkAddr)
			ca := testkit.Connect(t, proxy.Addr(), ns)
			cb := testkit.Connect(t, zkAddr, ns)
			ctx := testkit.Ctx(t)
			rw := rwlock.New(ca, "/lock")
			k := rw.ReadLock()
			if side == "write" {
				k = rw.WriteLock()
			}
			// Create the lock path first, so the fault hits the lock node.
			if _, err := cb.Create(ctx, "/lock", nil, framework.WithMode(framework.Container)); err != nil {
				t.Fatal(err)
			}
			fired := proxy.LoseNextCreateReply()
			if err := k.Acquire(ctx); err != nil {
				t.Fatalf("acquire through a lost create reply: %v", err)
			}
			select {
			case <-fired:
			default:
				t.Fatal("the lost-reply fault did not fire")
			}
			if got := testkit.Children(t, cb, "/lock"); len(got) != 1 {
				t.Fatalf("nodes after a lost create reply: %v, want 1", got)
			}
			if err := k.Release(ctx); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// A waiter whose node vanishes (deleted by an operator) makes a new one
// instead of failing on a missing index or waiting forever (pitfall 7).
func TestWaiterNodeDeleted(t *testing.T) {
	ns := testkit.Unique(t)
	ca, cb := testkit.Connect(t, zkAddr, ns), testkit.Connect(t, zkAddr, ns)
	ctx := testkit.Ctx(t)
	w, r := rwlock.New(ca, "/lock"), rwlock.New(cb, "/lock")
	if err := w.WriteLock().Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	res := acquireAsync(ctx, r.ReadLock())
	var readNode string
	testkit.Eventually(t, "read node", func() bool {
		for _, n := range testkit.Children(t, ca, "/lock") {
			if strings.Contains(n, "__READ__") {
				readNode = n
			}
		}
		return readNode != ""
	})
	if err := ca.Delete(ctx, "/lock/"+readNode); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteLock().Release(ctx); err != nil {
		t.Fatal(err)
	}
	mustAcquired(t, res, "reader whose node was deleted")
	if got := testkit.Children(t, ca, "/lock"); len(got) != 1 || got[0] == readNode {
		t.Fatalf("nodes %v, want one new read node", got)
	}
	if err := r.ReadLock().Release(ctx); err != nil {
		t.Fatal(err)
	}
}
