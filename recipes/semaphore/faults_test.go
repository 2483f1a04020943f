package semaphore_test

import (
	"context"
	"errors"
	"testing"

	"github.com/gocurator/curator/connstate"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/semaphore"
)

// A deadline or a cancel while queued for the V2 gate, and while holding
// the gate and waiting for a lease, leaves no gate or lease node
// (CURATOR-315, -335, -462): they are gone when Acquire returns.
func TestV2CancelInGateAndWhileWaiting(t *testing.T) {
	t.Parallel()
	ns := testkit.Unique(t)
	ctx := testkit.Ctx(t)
	m := modes[1]
	newSem := func() *semaphore.Semaphore {
		return semaphore.New(testkit.Connect(t, zkAddr, ns), semPath, 1, m.opts...)
	}
	checker := testkit.Connect(t, zkAddr, ns)
	const leases, gate = semPath + "/leases", semPath + "/locks"

	holder, err := newSem().Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// w1 passes the gate and waits for the lease, holding the gate.
	w1ctx, cancelW1 := context.WithCancel(ctx)
	defer cancelW1()
	w1 := acquireAsync(w1ctx, newSem())
	waitCount(t, checker, leases, 2)
	waitCount(t, checker, gate, 1)

	// w2 queues behind w1 at the gate until its deadline.
	dctx, cancel := context.WithTimeout(ctx, shortWait)
	defer cancel()
	if l, err := newSem().Acquire(dctx); l != nil || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("deadline in the gate: %v, %v; want DeadlineExceeded", l, err)
	}
	if got := testkit.Children(t, checker, gate); len(got) != 1 {
		t.Fatalf("gate nodes after a deadline in the gate: %v, want only w1's", got)
	}

	// w3 queues at the gate and is cancelled there.
	cctx, cancelW3 := context.WithCancel(ctx)
	w3 := acquireAsync(cctx, newSem())
	waitCount(t, checker, gate, 2)
	cancelW3()
	if r := await(t, w3); r.lease != nil || !errors.Is(r.err, context.Canceled) {
		t.Fatalf("cancel in the gate: %v, %v; want Canceled", r.lease, r.err)
	}
	// A cancel can race with the reply to the create, in which case the
	// node is found and deleted in the background: wait for it.
	waitCount(t, checker, gate, 1)

	// w1 is cancelled while it waits for a lease: its lease node and its
	// gate node go.
	pending(t, w1, "w1 with the lease held")
	cancelW1()
	if r := await(t, w1); r.lease != nil || !errors.Is(r.err, context.Canceled) {
		t.Fatalf("cancel while waiting for a lease: %v, %v; want Canceled", r.lease, r.err)
	}
	if got := testkit.Children(t, checker, leases); len(got) != 1 || leases+"/"+got[0] != holder.Node() {
		t.Fatalf("lease nodes %v, want only the holder's %s", got, holder.Node())
	}
	if got := testkit.Children(t, checker, gate); len(got) != 0 {
		t.Fatalf("gate nodes left: %v", got)
	}
	mustRelease(t, holder)
	if got := testkit.Children(t, checker, leases); len(got) != 0 {
		t.Fatalf("lease nodes left: %v", got)
	}
	// The semaphore still works.
	l, err := newSem().Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	mustRelease(t, l)
}

// A deadline or a cancel while waiting for a lease leaves no node, in both
// modes.
func TestCancelWhileWaitingLeavesNothing(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			ns := testkit.Unique(t)
			ctx := testkit.Ctx(t)
			checker := testkit.Connect(t, zkAddr, ns)
			holder, err := semaphore.New(testkit.Connect(t, zkAddr, ns), semPath, 1, m.opts...).Acquire(ctx)
			if err != nil {
				t.Fatal(err)
			}
			s := semaphore.New(testkit.Connect(t, zkAddr, ns), semPath, 1, m.opts...)
			dctx, cancel := context.WithTimeout(ctx, shortWait)
			defer cancel()
			if l, err := s.Acquire(dctx); l != nil || !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("Acquire past its deadline = %v, %v", l, err)
			}
			if got := leaseNodes(t, checker, m); len(got) != 1 {
				t.Fatalf("after a deadline: lease nodes %v, want only the holder's", got)
			}
			cctx, cancelW := context.WithCancel(ctx)
			w := acquireAsync(cctx, s)
			waitCount(t, checker, m.leaseDir(semPath), 2)
			cancelW()
			if r := await(t, w); r.lease != nil || !errors.Is(r.err, context.Canceled) {
				t.Fatalf("cancelled Acquire = %v, %v", r.lease, r.err)
			}
			// The cancel may race with the reply to the create (the node is
			// on the server before the client knows its name); then the
			// node is found and deleted in the background: wait for it.
			waitChildren(t, checker, m.leaseDir(semPath), "only the holder's lease node is left", func(ch []string) bool {
				n := 0
				for _, c := range ch {
					if m.v2 || c != "leases" && c != "locks" {
						n++
					}
				}
				return n == 1
			})
			if m.v2 {
				waitEmpty(t, checker, semPath+"/locks")
			}
			mustRelease(t, holder)
		})
	}
}

// A create applied by the server whose reply is lost must not leave a
// second node (or a node nobody owns): the protected create finds it.
// In V2 the fault hits the gate's create, or (armed again as soon as it
// fired) the lease's create.
func TestLostCreateReply(t *testing.T) {
	cases := []struct {
		name   string
		m      mode
		faults int // how many creates in a row lose their reply
	}{
		{"V1", modes[0], 1},
		{"V2 gate create", modes[1], 1},
		{"V2 gate and lease creates", modes[1], 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ns := testkit.Unique(t)
			ctx := testkit.Ctx(t)
			proxy := newProxy(t)
			c := testkit.Connect(t, proxy.Addr(), ns)
			checker := testkit.Connect(t, zkAddr, ns)
			s := semaphore.New(c, semPath, 1, tc.m.opts...)
			fired := proxy.LoseNextCreateReply()
			w := acquireAsync(ctx, s)
			for i := 1; i < tc.faults; i++ {
				testkit.WaitClosed(t, fired, "the lost-reply fault")
				fired = proxy.LoseNextCreateReply()
			}
			testkit.WaitClosed(t, fired, "the lost-reply fault")
			r := await(t, w)
			if r.err != nil {
				t.Fatal(r.err)
			}
			got := leaseNodes(t, checker, tc.m)
			if len(got) != 1 || tc.m.leaseDir(semPath)+"/"+got[0] != r.lease.Node() {
				t.Fatalf("lease nodes %v, want only %s", got, r.lease.Node())
			}
			mustRelease(t, r.lease)
			waitEmpty(t, checker, tc.m.leaseDir(semPath))
			if tc.m.v2 {
				waitEmpty(t, checker, semPath+"/locks")
			}
		})
	}
}

// Cancelled while a create's reply is lost (the node exists on the server,
// the client does not know its name): the node is found and deleted once
// the connection is back, in both modes and for both V2 creates.
func TestCancelDuringLostCreateReplyLeavesNothing(t *testing.T) {
	cases := []struct {
		name   string
		m      mode
		faults int
	}{
		{"V1", modes[0], 1},
		{"V2 gate create", modes[1], 1},
		{"V2 lease create", modes[1], 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ns := testkit.Unique(t)
			ctx := testkit.Ctx(t)
			proxy := newProxy(t)
			c := testkit.Connect(t, proxy.Addr(), ns)
			checker := testkit.Connect(t, zkAddr, ns)
			s := semaphore.New(c, semPath, 1, tc.m.opts...)
			actx, cancel := context.WithCancel(ctx)
			defer cancel()
			fired := proxy.LoseNextCreateReply()
			w := acquireAsync(actx, s)
			for i := 1; i < tc.faults; i++ {
				testkit.WaitClosed(t, fired, "the lost-reply fault")
				fired = proxy.LoseNextCreateReply()
			}
			testkit.WaitClosed(t, fired, "the lost-reply fault")
			cancel()
			if r := await(t, w); r.lease != nil || !errors.Is(r.err, context.Canceled) {
				t.Fatalf("Acquire cancelled during a lost reply = %v, %v; want Canceled", r.lease, r.err)
			}
			waitEmpty(t, checker, tc.m.leaseDir(semPath))
			if tc.m.v2 {
				waitEmpty(t, checker, semPath+"/locks")
			}
			// Nothing blocks the next acquirer.
			l, ok, err := semaphore.New(checker, semPath, 1, tc.m.opts...).TryAcquire(ctx)
			if !ok {
				t.Fatalf("TryAcquire after the fault = %v, %v; want a lease", ok, err)
			}
			mustRelease(t, l)
		})
	}
}

// A waiter partitioned past its session timeout (pitfall 5) notices it
// and comes back with a new node once connected again, rather than wait
// for ever on a node of a dead session; in V2 it also loses the gate and
// starts over rather than wait beside the next gate holder, where two
// waiting lease nodes could block each other. The cut outlasts the session
// on the server too: go-zookeeper v1.0.4 races on Conn.lastZxid when a
// connection gets its session back with watches set, and waiters have one.
func TestWaiterSurvivesSessionLoss(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			ns := testkit.Unique(t)
			ctx := testkit.Ctx(t)
			checker := testkit.Connect(t, zkAddr, ns)
			holder, err := semaphore.New(checker, semPath, 1, m.opts...).Acquire(ctx)
			if err != nil {
				t.Fatal(err)
			}
			proxy := newProxy(t)
			c := testkit.Connect(t, proxy.Addr(), ns, framework.WithSessionTimeout(sessionTimeout))
			w := acquireAsync(ctx, semaphore.New(c, semPath, 1, m.opts...))
			dir := m.leaseDir(semPath)
			waitCount(t, checker, dir, 2)
			if m.v2 {
				waitCount(t, checker, semPath+"/locks", 1)
			}
			first := testkit.Children(t, checker, dir)

			proxy.Cut()
			testkit.WaitState(t, c, connstate.Lost)
			// Restore only once the server expired the session too (the
			// waiter's node is gone).
			waitCount(t, checker, dir, 1)
			proxy.Restore()
			waitChildren(t, checker, dir, "the waiter's new node", func(ch []string) bool {
				return len(ch) == 2 && !(contains(first, ch[0]) && contains(first, ch[1]))
			})
			pending(t, w, "waiter with the lease held")
			mustRelease(t, holder)
			r := await(t, w)
			if r.err != nil {
				t.Fatal(r.err)
			}
			mustRelease(t, r.lease)
			waitEmpty(t, checker, dir)
			if m.v2 {
				waitEmpty(t, checker, semPath+"/locks")
			}
		})
	}
}

// Release while disconnected returns the error instead of reporting a
// success it did not have (CURATOR-678), and the delete goes on in the
// background until it succeeds. SessionPolicy keeps the lease through the
// disconnect, so Release really has a node to delete.
func TestReleaseWhileDisconnected(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			ns := testkit.Unique(t)
			ctx := testkit.Ctx(t)
			proxy := newProxy(t)
			c := testkit.Connect(t, proxy.Addr(), ns, framework.WithErrorPolicy(connstate.SessionPolicy{}))
			checker := testkit.Connect(t, zkAddr, ns)
			l, err := semaphore.New(c, semPath, 1, m.opts...).Acquire(ctx)
			if err != nil {
				t.Fatal(err)
			}
			changed := c.StateChanged()
			proxy.Cut()
			testkit.WaitClosed(t, changed, "Suspended")
			if l.Err() != nil {
				t.Fatalf("lease lost on Suspended under SessionPolicy: %v", l.Err())
			}
			rctx, cancel := context.WithTimeout(ctx, shortWait)
			defer cancel()
			if err := l.Release(rctx); err == nil {
				t.Fatal("Release while cut off returned nil")
			}
			testkit.WaitClosed(t, l.Done(), "Done after Release")
			if got := leaseNodes(t, checker, m); len(got) != 1 {
				t.Fatalf("lease nodes %v while cut off, want the released one still there", got)
			}
			proxy.Restore()
			waitEmpty(t, checker, m.leaseDir(semPath))
		})
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
