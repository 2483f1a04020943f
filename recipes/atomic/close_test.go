package atomic_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/connstate"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/atomic"
	"github.com/gocurator/curator/zktest"
)

// A handle's writer child used to stay until the session ended, so the
// value's node could not be deleted with a plain delete (Curator's
// client.delete().forPath(counter) failed with NotEmpty). Close deletes
// it: nothing is left but the value, on the server, and the plain delete
// (the same request as Java's) succeeds.
func TestCloseLeavesNoWriterChild(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t)
	ns := testkit.Unique(t)
	c := testkit.Connect(t, zkAddr, ns)
	observer := testkit.Connect(t, zkAddr, ns)

	l := atomic.NewLong(c, counterPath)
	if _, err := l.Add(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if kids := testkit.Children(t, observer, counterPath); len(kids) != 1 {
		t.Fatalf("children %v of an open handle; want its writer child", kids)
	}
	if err := observer.Delete(ctx, counterPath); !errors.Is(err, zk.ErrNotEmpty) {
		t.Fatalf("plain delete with the writer child there = %v; want ErrNotEmpty", err)
	}
	if err := l.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if kids := testkit.Children(t, observer, counterPath); len(kids) != 0 {
		t.Fatalf("children %v after Close", kids)
	}
	if err := l.Close(ctx); err != nil {
		t.Fatalf("second Close = %v; want nil", err)
	}
	if got, err := atomic.NewLong(observer, counterPath).Get(ctx); got != 1 || err != nil {
		t.Fatalf("value %d, %v after Close; want it kept", got, err)
	}
	if err := observer.Delete(ctx, counterPath); err != nil {
		t.Fatalf("plain delete of the counter after Close: %v", err)
	}

	i := atomic.NewInt(c, "/ints/a")
	v := atomic.NewValue(c, "/values/a")
	if _, err := i.Add(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := v.ForceSet(ctx, []byte("x")); err != nil {
		t.Fatal(err)
	}
	if kids := testkit.Children(t, observer, "/values/a"); len(kids) != 1 || "/values/a/"+kids[0] != atomic.ValueWriterPath(v) {
		t.Fatalf("children %v; want the writer child %s", kids, atomic.ValueWriterPath(v))
	}
	if err := i.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := v.Close(ctx); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/ints/a", "/values/a"} {
		if err := observer.Delete(ctx, p); err != nil {
			t.Fatalf("plain delete of %s after Close: %v", p, err)
		}
	}
	if n := testkit.WatchCount(t, zkAddr, c); n != 0 {
		t.Fatalf("%d watches left", n)
	}
}

// A process that makes a handle per call, as the CLI does, used to pile
// up one writer child per handle until its session ended.
func TestHandlePerCallLeavesNoChildren(t *testing.T) {
	t.Parallel()
	const handles = 100
	ctx := testkit.Ctx(t)
	ns := testkit.Unique(t)
	c := testkit.Connect(t, zkAddr, ns)
	for i := 0; i < handles; i++ {
		l := atomic.NewLong(c, counterPath)
		if _, err := l.Add(ctx, 1); err != nil {
			t.Fatal(err)
		}
		if err := l.Close(ctx); err != nil {
			t.Fatal(err)
		}
	}
	observer := testkit.Connect(t, zkAddr, ns)
	if kids := testkit.Children(t, observer, counterPath); len(kids) != 0 {
		t.Fatalf("%d children after %d handles were made and closed: %v", len(kids), handles, kids)
	}
	if got, err := atomic.NewLong(observer, counterPath).Get(ctx); got != handles || err != nil {
		t.Fatalf("value %d, %v; want %d", got, err, handles)
	}
}

// Close while an update is in flight waits for it: the update is applied
// once and returns its value, calls queued behind it fail with ErrClosed,
// and the writer child is deleted after the update, not before (which
// would let the update make it again).
func TestCloseWaitsForTheUpdateInFlight(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t)
	ns := testkit.Unique(t)
	c := testkit.Connect(t, zkAddr, ns)
	observer := testkit.Connect(t, zkAddr, ns)
	l := atomic.NewLong(c, counterPath)
	if err := l.ForceSet(ctx, 10); err != nil {
		t.Fatal(err)
	}
	inWrite, release := make(chan struct{}), make(chan struct{})
	atomic.SetBeforeWrite(l, func(bool) {
		close(inWrite)
		<-release
	})
	type added struct {
		v   int64
		err error
	}
	first := make(chan added, 1)
	go func() {
		v, err := l.Add(ctx, 1)
		first <- added{v, err}
	}()
	<-inWrite
	queued := make(chan error, 1)
	go func() {
		_, err := l.Add(ctx, 100)
		queued <- err
	}()
	closed := make(chan error, 1)
	go func() { closed <- l.Close(ctx) }()
	// The queued call fails once Close has begun, while the first still
	// holds the write turn.
	if err := <-queued; !errors.Is(err, atomic.ErrClosed) {
		t.Fatalf("Add queued behind the update = %v; want ErrClosed", err)
	}
	select {
	case err := <-closed:
		t.Fatalf("Close returned %v while the update was in flight", err)
	default:
	}
	close(release)
	if r := <-first; r.v != 11 || r.err != nil {
		t.Fatalf("Add in flight = %d, %v; want 11", r.v, r.err)
	}
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	if kids := testkit.Children(t, observer, counterPath); len(kids) != 0 {
		t.Fatalf("children %v after Close", kids)
	}
	if got, _ := atomic.NewLong(observer, counterPath).Get(ctx); got != 11 {
		t.Fatalf("value %d; want 11", got)
	}
}

// Close and Add started together, many times, without a hook: whichever
// wins, the Add is applied (and counted) or fails with ErrClosed (and is
// not), and no writer child is left.
func TestCloseRacingAdd(t *testing.T) {
	t.Parallel()
	const rounds = 30
	ctx := testkit.Ctx(t)
	ns := testkit.Unique(t)
	c := testkit.Connect(t, zkAddr, ns)
	observer := testkit.Connect(t, zkAddr, ns)
	var applied int64
	for i := 0; i < rounds; i++ {
		l := atomic.NewLong(c, counterPath)
		adds := make(chan error, 2)
		started := make(chan struct{}, 2)
		for j := 0; j < 2; j++ {
			go func() {
				started <- struct{}{}
				_, err := l.Add(ctx, 1)
				adds <- err
			}()
		}
		// Close as the Adds begin: one is usually in flight, the other
		// queued behind it or not yet begun.
		<-started
		<-started
		if err := l.Close(ctx); err != nil {
			t.Fatal(err)
		}
		for j := 0; j < 2; j++ {
			switch err := <-adds; {
			case err == nil:
				applied++
			case !errors.Is(err, atomic.ErrClosed):
				t.Fatalf("round %d: Add = %v; want nil or ErrClosed", i, err)
			}
		}
		if _, err := l.Add(ctx, 1); !errors.Is(err, atomic.ErrClosed) {
			t.Fatalf("Add after Close = %v", err)
		}
	}
	if kids := testkit.Children(t, observer, counterPath); len(kids) != 0 {
		t.Fatalf("children %v after %d rounds of Close racing Add", kids, rounds)
	}
	if got, _ := atomic.NewLong(observer, counterPath).Get(ctx); got != applied {
		t.Fatalf("value %d; want the %d Adds that returned nil", got, applied)
	}
	t.Logf("%d of %d Adds applied before Close", applied, 2*rounds)
}

// When Close's ctx ends while an update holds the write turn, Close returns
// at once with ctx's error, and the update deletes the writer child as it
// ends.
func TestCloseDeadlineDuringUpdate(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t)
	ns := testkit.Unique(t)
	c := testkit.Connect(t, zkAddr, ns)
	observer := testkit.Connect(t, zkAddr, ns)
	l := atomic.NewLong(c, counterPath)
	if _, err := l.Add(ctx, 1); err != nil {
		t.Fatal(err)
	}
	inWrite, release := make(chan struct{}), make(chan struct{})
	atomic.SetBeforeWrite(l, func(bool) {
		close(inWrite)
		<-release
	})
	added := make(chan error, 1)
	go func() {
		_, err := l.Add(ctx, 1)
		added <- err
	}()
	<-inWrite
	cctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if err := l.Close(cctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Close = %v; want its deadline", err)
	}
	if _, err := l.Get(ctx); !errors.Is(err, atomic.ErrClosed) {
		t.Fatalf("Get after Close = %v; want ErrClosed", err)
	}
	close(release)
	if err := <-added; err != nil {
		t.Fatalf("the update in flight = %v", err)
	}
	testkit.Eventually(t, "writer child deleted after the update", func() bool {
		return len(testkit.Children(t, observer, counterPath)) == 0
	})
	if got, _ := atomic.NewLong(observer, counterPath).Get(ctx); got != 2 {
		t.Fatalf("value %d; want 2", got)
	}
}

// Close with the connection down returns by its deadline, and the delete
// goes on in the background: the child is gone once the connection is
// back, on the same session.
func TestCloseWhileDisconnected(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t)
	ns := testkit.Unique(t)
	proxy := zktest.NewProxy(t, zkAddr)
	c := testkit.Connect(t, proxy.Addr(), ns)
	observer := testkit.Connect(t, zkAddr, ns)
	l := atomic.NewLong(c, counterPath)
	if _, err := l.Add(ctx, 1); err != nil {
		t.Fatal(err)
	}
	proxy.Cut()
	testkit.WaitState(t, c, connstate.Suspended)
	const deadline = 200 * time.Millisecond
	cctx, cancel := context.WithTimeout(ctx, deadline)
	defer cancel()
	start := time.Now()
	err := l.Close(cctx)
	took := time.Since(start)
	if err == nil {
		t.Fatal("Close with the connection down = nil; want the delete's error")
	}
	if took > deadline+time.Second {
		t.Fatalf("Close took %v with a deadline of %v", took, deadline)
	}
	t.Logf("Close with the connection down: %v after %v", err, took)
	if kids := testkit.Children(t, observer, counterPath); len(kids) != 1 {
		t.Fatalf("children %v while disconnected; want the writer child still there", kids)
	}
	proxy.Restore()
	testkit.WaitState(t, c, connstate.Reconnected)
	testkit.Eventually(t, "writer child deleted in the background", func() bool {
		return len(testkit.Children(t, observer, counterPath)) == 0
	})
}

// Every call of a closed handle fails with ErrClosed and changes nothing.
func TestCallsAfterCloseFail(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t)
	ns := testkit.Unique(t)
	c := testkit.Connect(t, zkAddr, ns)
	l := atomic.NewLong(c, counterPath)
	if err := l.ForceSet(ctx, 5); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(ctx); err != nil {
		t.Fatal(err)
	}
	check := func(name string, err error) {
		t.Helper()
		if !errors.Is(err, atomic.ErrClosed) {
			t.Errorf("%s after Close = %v; want ErrClosed", name, err)
		}
	}
	_, err := l.Get(ctx)
	check("Get", err)
	_, err = l.Add(ctx, 1)
	check("Add", err)
	_, err = l.TryAdd(ctx, 1)
	check("TryAdd", err)
	_, err = l.Subtract(ctx, 1)
	check("Subtract", err)
	_, err = l.Increment(ctx)
	check("Increment", err)
	_, err = l.Decrement(ctx)
	check("Decrement", err)
	_, err = l.TrySet(ctx, 1)
	check("TrySet", err)
	_, err = l.CompareAndSet(ctx, 5, 1)
	check("CompareAndSet", err)
	check("ForceSet", l.ForceSet(ctx, 1))
	_, err = l.Initialize(ctx, 1)
	check("Initialize", err)

	v := atomic.NewValue(c, "/values/a")
	if err := v.Close(ctx); err != nil {
		t.Fatalf("Close of a handle that never wrote = %v", err)
	}
	_, err = v.Get(ctx)
	check("Value.Get", err)
	_, err = v.TrySet(ctx, []byte("x"))
	check("Value.TrySet", err)
	_, err = v.CompareAndSet(ctx, nil, []byte("x"))
	check("Value.CompareAndSet", err)
	check("Value.ForceSet", v.ForceSet(ctx, []byte("x")))
	_, err = v.Initialize(ctx, []byte("x"))
	check("Value.Initialize", err)

	observer := testkit.Connect(t, zkAddr, ns)
	if got, _ := atomic.NewLong(observer, counterPath).Get(ctx); got != 5 {
		t.Fatalf("value %d; want 5, unchanged", got)
	}
	if st, err := observer.Exists(ctx, "/values/a"); st != nil || err != nil {
		t.Fatalf("a closed Value made its node: %v, %v", st, err)
	}
}

// Close of a nil handle is nil, as for every handle; Close with a nil ctx
// is refused and changes nothing; Close of a handle made with bad input
// is nil.
func TestCloseNilAndBadInput(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t)
	var l *atomic.Long
	var i *atomic.Int
	var v *atomic.Value
	for name, err := range map[string]error{
		"Long": l.Close(ctx), "Int": i.Close(ctx), "Value": v.Close(ctx),
	} {
		if err != nil {
			t.Errorf("nil %s Close = %v; want nil", name, err)
		}
	}
	c := testkit.Connect(t, zkAddr, testkit.Unique(t))
	h := atomic.NewLong(c, counterPath)
	//lint:ignore SA1012 a nil ctx is what is tested
	if err := h.Close(nil); !errors.Is(err, framework.ErrInvalidOption) {
		t.Fatalf("Close(nil) = %v; want ErrInvalidOption", err)
	}
	if v, err := h.Add(ctx, 1); v != 1 || err != nil {
		t.Fatalf("Add after a refused Close = %d, %v", v, err)
	}
	if err := h.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := atomic.NewLong(nil, "/a").Close(ctx); err != nil {
		t.Fatalf("Close of a handle with a nil client = %v", err)
	}
	if err := atomic.NewValue(c, "bad").Close(ctx); err != nil {
		t.Fatalf("Close of a handle with a bad path = %v", err)
	}
}
