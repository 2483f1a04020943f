package framework

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/connstate"
	"github.com/gocurator/curator/internal/clock"
	"github.com/gocurator/curator/zktest"
)

// serverWatches returns the paths on which the server at addr holds a
// data-table watch of session sid (wchc: getData, exists, and persistent
// watches, which 3.6-3.8 keep in both tables).
func serverWatches(t testing.TB, addr string, sid int64) []string {
	t.Helper()
	out, err := fourLetter(addr, "wchc")
	if err != nil {
		t.Fatal(err)
	}
	var (
		paths []string
		in    bool
	)
	for _, line := range strings.Split(out, "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(trimmed, "0x"):
			id, err := strconv.ParseUint(trimmed[2:], 16, 64)
			in = err == nil && int64(id) == sid
		case in && strings.HasPrefix(trimmed, "/"):
			paths = append(paths, trimmed)
		}
	}
	return paths
}

func fourLetter(addr, cmd string) (string, error) {
	conn, err := net.DialTimeout("tcp", addr, 3*time.Second)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(3 * time.Second)); err != nil {
		return "", err
	}
	if _, err := io.WriteString(conn, cmd); err != nil {
		return "", err
	}
	b, err := io.ReadAll(conn)
	return string(b), err
}

// awaitServerWatches waits until the session holds exactly want (sorted).
func awaitServerWatches(t testing.TB, addr string, c *Client, want ...string) {
	t.Helper()
	slices.Sort(want)
	var got []string
	eventually(t, testTimeout, fmt.Sprintf("server watches of 0x%x = %v", c.SessionID(), want), func() (bool, error) {
		got = serverWatches(t, addr, c.SessionID())
		slices.Sort(got)
		return slices.Equal(got, want), fmt.Errorf("have %v", got)
	})
}

// awaitNoServerWatches waits until the server holds no watch of session
// sid (a closed session's go as the server ends it).
func awaitNoServerWatches(t testing.TB, addr string, sid int64) {
	t.Helper()
	eventually(t, testTimeout, fmt.Sprintf("no server watches of 0x%x", sid), func() (bool, error) {
		got := serverWatches(t, addr, sid)
		return len(got) == 0, fmt.Errorf("have %v", got)
	})
}

// collect reads events until one satisfies stop (included), failing after
// the test timeout.
func collect(t testing.TB, w *Watcher, stop func(WatchEvent) bool) []WatchEvent {
	t.Helper()
	var evs []WatchEvent
	for {
		ev := waitEvent(t, w.Events(), testTimeout, "watch event")
		evs = append(evs, ev)
		if stop(ev) {
			return evs
		}
	}
}

// expectEvent waits for the next event and checks its type and path.
func expectEvent(t testing.TB, w *Watcher, typ WatchEventType, path string) WatchEvent {
	t.Helper()
	ev := waitEvent(t, w.Events(), testTimeout, fmt.Sprintf("%v %s", typ, path))
	if ev.Type != typ || ev.Path != path {
		t.Fatalf("event %v %s, want %v %s", ev.Type, ev.Path, typ, path)
	}
	return ev
}

// A recursive watch on a tree gets every create, set and delete below it,
// in order per path (coalesced only as the last of a path's changes);
// never /ab for /a, never a children change (ZOOKEEPER-4475), and not the
// children change of a one-shot watch set below it.
func TestWatchRecursiveTree(t *testing.T) {
	c := connectNS(t, newNamespace(t))
	other := connectNS(t, c.Namespace())
	ctx := testCtx(t)
	w, err := c.Watch(ctx, "/a", Recursive())
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if !w.Persistent() {
		t.Fatal("served by one-shot watches on a 3.8 server")
	}
	// A one-shot children watch below the root, on the same session.
	if _, err := c.Create(ctx, "/a/kids", nil, CreatingParents()); err != nil {
		t.Fatal(err)
	}
	_, _, kidsCh, err := c.ChildrenW(ctx, "/a/kids")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]WatchEventType{
		"/a":      {WatchCreated},
		"/a/kids": {WatchCreated},
	}
	op := func(typ WatchEventType, path string, f func() error) {
		t.Helper()
		if err := f(); err != nil {
			t.Fatalf("%v %s: %v", typ, path, err)
		}
		want[path] = append(want[path], typ)
	}
	for i := range 5 {
		p := fmt.Sprintf("/a/n%d", i)
		op(WatchCreated, p, func() error { _, err := other.Create(ctx, p, []byte("x")); return err })
		op(WatchCreated, p+"/deep", func() error { _, err := other.Create(ctx, p+"/deep", nil); return err })
		op(WatchDataChanged, p+"/deep", func() error { _, err := other.Set(ctx, p+"/deep", []byte("y"), -1); return err })
		op(WatchDataChanged, p, func() error { _, err := other.Set(ctx, p, []byte("z"), -1); return err })
		op(WatchDeleted, p+"/deep", func() error { return other.Delete(ctx, p+"/deep") })
	}
	op(WatchCreated, "/a/kids/k", func() error { _, err := other.Create(ctx, "/a/kids/k", nil); return err })
	// Siblings that share the prefix: never seen.
	for _, p := range []string{"/ab", "/ab/c", "/a-b"} {
		if _, err := other.Create(ctx, p, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := other.Set(ctx, p, []byte("q"), -1); err != nil {
			t.Fatal(err)
		}
	}
	op(WatchCreated, "/a/end", func() error { _, err := other.Create(ctx, "/a/end", nil); return err })
	if ev := waitEvent(t, kidsCh, testTimeout, "the one-shot children watch"); ev.Type != zk.EventNodeChildrenChanged || ev.Path != "/a/kids" {
		t.Fatalf("one-shot children watch got %+v", ev)
	}
	evs := collect(t, w, func(ev WatchEvent) bool { return ev.Path == "/a/end" })
	got := map[string][]WatchEvent{}
	for _, ev := range evs {
		switch {
		case ev.Type == WatchChildrenChanged:
			t.Errorf("a children change reached a recursive watch: %+v", ev)
		case ev.Path != "/a" && !strings.HasPrefix(ev.Path, "/a/"):
			t.Errorf("an event outside the tree: %+v", ev)
		}
		got[ev.Path] = append(got[ev.Path], ev)
	}
	for path, types := range want {
		g := got[path]
		if len(g) == 0 {
			t.Errorf("%s: no event, want %v", path, types)
			continue
		}
		coalesced := slices.ContainsFunc(g, func(ev WatchEvent) bool { return ev.Coalesced })
		var gt []WatchEventType
		for _, ev := range g {
			gt = append(gt, ev.Type)
		}
		if !coalesced && !slices.Equal(gt, types) || gt[len(gt)-1] != types[len(types)-1] {
			t.Errorf("%s: events %v (coalesced %v), want %v", path, gt, coalesced, types)
		}
	}
	// One server watch for the whole tree.
	awaitServerWatches(t, server(t).Addr(), c, c.full("/a"))
}

// A node watch sees the node's creation, data, children and deletion;
// a one-shot GetW on the same path in the same session does not silence
// it (ZOOKEEPER-4466): the GetW is served from the persistent watch, and
// still fires once.
func TestWatchNodeNotSilencedByOneShot(t *testing.T) {
	c := connectNS(t, newNamespace(t))
	ctx := testCtx(t)
	w, err := c.Watch(ctx, "/n")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := c.Create(ctx, "/n", nil); err != nil {
		t.Fatal(err)
	}
	expectEvent(t, w, WatchCreated, "/n")
	_, _, once, err := c.GetW(ctx, "/n")
	if err != nil {
		t.Fatal(err)
	}
	_, _, kids, err := c.ChildrenW(ctx, "/n")
	if err != nil {
		t.Fatal(err)
	}
	// Still one server watch: the one-shots are not on the server.
	awaitServerWatches(t, server(t).Addr(), c, c.full("/n"))
	for i := range 3 {
		if _, err := c.Set(ctx, "/n", []byte{byte(i)}, -1); err != nil {
			t.Fatal(err)
		}
		expectEvent(t, w, WatchDataChanged, "/n")
	}
	if ev := waitEvent(t, once, testTimeout, "GetW"); ev.Type != zk.EventNodeDataChanged || ev.Path != "/n" {
		t.Fatalf("GetW got %+v", ev)
	}
	if _, ok := <-once; ok {
		t.Fatal("GetW channel fired twice")
	}
	if _, err := c.Create(ctx, "/n/k", nil); err != nil {
		t.Fatal(err)
	}
	expectEvent(t, w, WatchChildrenChanged, "/n")
	if ev := waitEvent(t, kids, testTimeout, "ChildrenW"); ev.Type != zk.EventNodeChildrenChanged || ev.Path != "/n" {
		t.Fatalf("ChildrenW got %+v", ev)
	}
	if err := c.Delete(ctx, "/n/k"); err != nil {
		t.Fatal(err)
	}
	expectEvent(t, w, WatchChildrenChanged, "/n")
	if err := c.Delete(ctx, "/n"); err != nil {
		t.Fatal(err)
	}
	expectEvent(t, w, WatchDeleted, "/n")
}

// A node watch and a recursive watch on one path share one server watch
// (recursive); the node watch still gets its children changes, made from
// the children's creations and deletions, once each.
func TestWatchNodeAndRecursiveShareAPath(t *testing.T) {
	c := connectNS(t, newNamespace(t))
	ctx := testCtx(t)
	if _, err := c.Create(ctx, "/p", nil); err != nil {
		t.Fatal(err)
	}
	node, err := c.Watch(ctx, "/p")
	if err != nil {
		t.Fatal(err)
	}
	defer node.Close()
	tree, err := c.Watch(ctx, "/p", Recursive())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Create(ctx, "/p/a", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Create(ctx, "/p/a/b", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Set(ctx, "/p", []byte("d"), -1); err != nil {
		t.Fatal(err)
	}
	expectEvent(t, tree, WatchCreated, "/p/a")
	expectEvent(t, tree, WatchCreated, "/p/a/b")
	expectEvent(t, tree, WatchDataChanged, "/p")
	expectEvent(t, node, WatchChildrenChanged, "/p")
	expectEvent(t, node, WatchDataChanged, "/p")
	awaitServerWatches(t, server(t).Addr(), c, c.full("/p"))
	// The recursive one goes: the node one is narrowed to persistent and
	// keeps working.
	if err := tree.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Create(ctx, "/p/a/b/c", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Create(ctx, "/p/z", nil); err != nil {
		t.Fatal(err)
	}
	expectEvent(t, node, WatchChildrenChanged, "/p")
	select {
	case ev := <-node.Events():
		t.Fatalf("unexpected %+v", ev)
	case <-time.After(100 * time.Millisecond):
	}
}

// Close, ctx's end and the client's Close end the Watcher, close Events,
// and leave no watch of ours on the server; a second Watcher of the same
// path keeps the server's watch until it goes too.
func TestWatchEndsLeaveNoServerWatch(t *testing.T) {
	c := connectNS(t, newNamespace(t))
	ctx := testCtx(t)
	addr := server(t).Addr()
	a, err := c.Watch(ctx, "/x", Recursive())
	if err != nil {
		t.Fatal(err)
	}
	bctx, cancel := context.WithCancel(ctx)
	b, err := c.Watch(bctx, "/x", Recursive())
	if err != nil {
		t.Fatal(err)
	}
	n, err := c.Watch(ctx, "/y")
	if err != nil {
		t.Fatal(err)
	}
	awaitServerWatches(t, addr, c, c.full("/x"), c.full("/y"))
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if _, ok := <-a.Events(); ok {
		t.Fatal("Events open after Close")
	}
	if a.Err() != nil {
		t.Fatalf("Err after Close = %v", a.Err())
	}
	awaitServerWatches(t, addr, c, c.full("/x"), c.full("/y"))
	cancel()
	waitClosed(t, b.Done(), testTimeout, "Watcher end on ctx")
	if !errors.Is(b.Err(), context.Canceled) {
		t.Fatalf("Err after ctx = %v", b.Err())
	}
	awaitServerWatches(t, addr, c, c.full("/y"))
	sid := c.SessionID()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	waitClosed(t, n.Done(), testTimeout, "Watcher end on client Close")
	if !errors.Is(n.Err(), ErrClosed) {
		t.Fatalf("Err after client Close = %v", n.Err())
	}
	awaitNoServerWatches(t, addr, sid)
}

// Bad input gets typed errors and leaves nothing on the server; Watch on
// a closed client is ErrClosed.
func TestWatchBadInput(t *testing.T) {
	c := connectNS(t, newNamespace(t))
	ctx := testCtx(t)
	// "/.." would climb over the namespace: refused like every relative
	// segment.
	for _, p := range []string{"", "rel", "/a/", "/a//b", "/a/../b", "/..", "/../other", "/a\x00"} {
		if _, err := c.Watch(ctx, p); !errors.Is(err, ErrInvalidPath) {
			t.Errorf("Watch(%q) = %v, want ErrInvalidPath", p, err)
		}
	}
	if _, err := c.Watch(ctx, "/a", nil); !errors.Is(err, ErrInvalidOption) {
		t.Errorf("nil option: %v", err)
	}
	//lint:ignore SA1012 a nil context is what is tested
	if _, err := c.Watch(nil, "/a"); !errors.Is(err, ErrInvalidOption) { //nolint:staticcheck
		t.Errorf("nil ctx: %v", err)
	}
	done, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := c.Watch(done, "/a"); !errors.Is(err, context.Canceled) {
		t.Errorf("ended ctx: %v", err)
	}
	small := connectNS(t, c.Namespace(), WithJuteMaxBuffer(1024))
	if _, err := small.Watch(ctx, "/"+strings.Repeat("x", 2000)); !errors.Is(err, ErrDataTooLarge) {
		t.Errorf("path over jute.maxbuffer: %v", err)
	}
	awaitServerWatches(t, server(t).Addr(), c)
	awaitServerWatches(t, server(t).Addr(), small)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Watch(ctx, "/a"); !errors.Is(err, ErrClosed) {
		t.Errorf("after Close: %v", err)
	}
}

// Close racing Watch: every Watch either returns a Watcher that ends with
// ErrClosed, or an error; nothing is left running or on the server.
func TestWatchRacingClose(t *testing.T) {
	for i := range 5 {
		c := connectNS(t, newNamespace(t))
		sid := c.SessionID()
		ctx := testCtx(t)
		errs := make(chan error, 20)
		for j := range 20 {
			go func() {
				w, err := c.Watch(ctx, fmt.Sprintf("/r%d", j), Recursive())
				if err == nil {
					<-w.Done()
					err = w.Err()
				}
				errs <- err
			}()
		}
		if i%2 == 1 {
			time.Sleep(time.Duration(i) * time.Millisecond) // vary the race, not a wait for a condition
		}
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		for range 20 {
			if err := <-errs; !errors.Is(err, ErrClosed) {
				t.Fatalf("Watch racing Close: %v, want ErrClosed", err)
			}
		}
		awaitNoServerWatches(t, server(t).Addr(), sid)
	}
}

// A cut connection (same session): the watch is armed again on the new
// connection, a Resync comes, and changes after it arrive.
func TestWatchSurvivesCut(t *testing.T) {
	srv := server(t)
	proxy := zktest.NewProxy(t, srv.Addr())
	c := connect(t, proxy.Addr(), WithNamespace(newNamespace(t)))
	other := connectNS(t, c.Namespace())
	ctx := testCtx(t)
	w, err := c.Watch(ctx, "/t", Recursive())
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	states := record(c)
	defer states.cancel()
	sid := c.SessionID()
	proxy.Cut()
	states.expect(t, testTimeout, connstate.Suspended)
	if _, err := other.Create(ctx, "/t/during", nil, CreatingParents()); err != nil {
		t.Fatal(err)
	}
	proxy.Restore()
	states.expect(t, testTimeout, connstate.Reconnected)
	if c.SessionID() != sid {
		t.Fatal("a new session")
	}
	evs := collect(t, w, func(ev WatchEvent) bool { return ev.Type == WatchResync })
	if r := evs[len(evs)-1]; r.NewSession || r.Path != "/t" {
		t.Fatalf("resync %+v", r)
	}
	if _, err := other.Create(ctx, "/t/after", nil); err != nil {
		t.Fatal(err)
	}
	collect(t, w, func(ev WatchEvent) bool { return ev.Path == "/t/after" && ev.Type == WatchCreated })
	awaitServerWatches(t, srv.Addr(), c, c.full("/t"))
}

// A silent partition shorter than the session, then expiry of the session
// on the client's clock and a new session: the watch is armed again each
// time, with Resync (NewSession the second time).
func TestWatchSurvivesPartitionAndExpiry(t *testing.T) {
	srv := server(t)
	proxy := zktest.NewProxy(t, srv.Addr())
	fake := clock.NewFake(time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC))
	c := connect(t, proxy.Addr(), WithNamespace(newNamespace(t)), WithSessionTimeout(4*time.Second), withClock(fake))
	other := connectNS(t, c.Namespace())
	ctx := testCtx(t)
	w, err := c.Watch(ctx, "/e", Recursive())
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	states := record(c)
	defer states.cancel()
	first := c.SessionID()

	// Silent, shorter than the session (the fake clock does not move).
	proxy.BlackHole()
	states.expect(t, testTimeout, connstate.Suspended)
	proxy.Restore()
	states.expect(t, testTimeout, connstate.Reconnected)
	collect(t, w, func(ev WatchEvent) bool { return ev.Type == WatchResync && !ev.NewSession })
	if _, err := other.Create(ctx, "/e/one", nil, CreatingParents()); err != nil {
		t.Fatal(err)
	}
	collect(t, w, func(ev WatchEvent) bool { return ev.Path == "/e/one" })

	// Past the session on the client's clock: Lost, a new session.
	proxy.BlackHole()
	states.expect(t, testTimeout, connstate.Suspended)
	fake.Advance(c.SessionTimeout())
	states.expect(t, testTimeout, connstate.Lost)
	proxy.Restore()
	states.expect(t, testTimeout, connstate.Reconnected)
	if c.SessionID() == first {
		t.Fatal("same session")
	}
	collect(t, w, func(ev WatchEvent) bool { return ev.Type == WatchResync && ev.NewSession })
	if _, err := other.Create(ctx, "/e/two", nil); err != nil {
		t.Fatal(err)
	}
	collect(t, w, func(ev WatchEvent) bool { return ev.Path == "/e/two" })
	awaitServerWatches(t, srv.Addr(), c, c.full("/e"))
}

// A reconnection with hundreds of one-shot and persistent watches at
// once: every persistent watch is armed again (in SetWatches2 requests),
// go-zookeeper's setWatches sets the one-shots, and nothing collides.
func TestWatchReconnectWithManyWatches(t *testing.T) {
	srv := server(t)
	proxy := zktest.NewProxy(t, srv.Addr())
	c := connect(t, proxy.Addr(), WithNamespace(newNamespace(t)))
	other := connectNS(t, c.Namespace())
	ctx := testCtx(t)
	const n = 300
	var ws []*Watcher
	var ones []<-chan zk.Event
	var want []string
	for i := range n {
		p := fmt.Sprintf("/m/p%03d", i)
		if _, err := c.Create(ctx, p, nil, CreatingParents()); err != nil {
			t.Fatal(err)
		}
		w, err := c.Watch(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		ws = append(ws, w)
		o := fmt.Sprintf("/m/o%03d", i)
		if _, err := c.Create(ctx, o, nil); err != nil {
			t.Fatal(err)
		}
		_, _, ch, err := c.GetW(ctx, o)
		if err != nil {
			t.Fatal(err)
		}
		ones = append(ones, ch)
		// Half the persistent paths also get a one-shot, served locally.
		if i%2 == 0 {
			if _, _, _, err := c.GetW(ctx, p); err != nil {
				t.Fatal(err)
			}
		}
		want = append(want, c.full(p), c.full(o))
	}
	awaitServerWatches(t, srv.Addr(), c, want...)
	t.Logf("%d server watches (wchc) before the reconnection", len(want))
	states := record(c)
	defer states.cancel()
	proxy.Cut()
	states.expect(t, testTimeout, connstate.Suspended)
	proxy.Restore()
	states.expect(t, testTimeout, connstate.Reconnected)
	awaitServerWatches(t, srv.Addr(), c, want...)
	for i, w := range ws {
		collect(t, w, func(ev WatchEvent) bool { return ev.Type == WatchResync })
		p := fmt.Sprintf("/m/p%03d", i)
		if _, err := other.Set(ctx, p, []byte("x"), -1); err != nil {
			t.Fatal(err)
		}
		if _, err := other.Set(ctx, fmt.Sprintf("/m/o%03d", i), []byte("x"), -1); err != nil {
			t.Fatal(err)
		}
	}
	for i, w := range ws {
		collect(t, w, func(ev WatchEvent) bool { return ev.Type == WatchDataChanged })
		if ev := waitEvent(t, ones[i], testTimeout, "one-shot"); ev.Type != zk.EventNodeDataChanged {
			t.Fatalf("one-shot %d: %+v", i, ev)
		}
	}
	// The persistent ones stay, the one-shots fired.
	want = want[:0]
	for i := range n {
		want = append(want, c.full(fmt.Sprintf("/m/p%03d", i)))
	}
	awaitServerWatches(t, srv.Addr(), c, want...)
}

// A server restart (same session, within its timeout): armed again.
func TestWatchSurvivesServerRestart(t *testing.T) {
	srv := zktest.StartServer(t)
	c := connect(t, srv.ConnectString(), WithNamespace(newNamespace(t)), WithSessionTimeout(20*time.Second))
	ctx := testCtx(t)
	w, err := c.Watch(ctx, "/s", Recursive())
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	states := record(c)
	defer states.cancel()
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	states.expect(t, testTimeout, connstate.Suspended)
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	states.expect(t, testTimeout, connstate.Reconnected)
	collect(t, w, func(ev WatchEvent) bool { return ev.Type == WatchResync })
	if _, err := c.Create(ctx, "/s/x", nil, CreatingParents()); err != nil {
		t.Fatal(err)
	}
	collect(t, w, func(ev WatchEvent) bool { return ev.Path == "/s/x" && ev.Type == WatchCreated })
	awaitServerWatches(t, srv.Addr(), c, c.full("/s"))
}

// A consumer that does not read: the event goroutine is not held up (the
// client keeps working), the queue holds one event per path whatever the
// number of changes, and once read, each path's last event comes, marked
// Coalesced, nothing lost.
func TestWatchSlowConsumerCoalesces(t *testing.T) {
	c := connectNS(t, newNamespace(t))
	other := connectNS(t, c.Namespace())
	ctx := testCtx(t)
	w, err := c.Watch(ctx, "/q", Recursive())
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	const paths, sets = 5, 40
	for i := range paths {
		if _, err := other.Create(ctx, fmt.Sprintf("/q/p%d", i), nil, CreatingParents()); err != nil {
			t.Fatal(err)
		}
	}
	for j := range sets {
		for i := range paths {
			if _, err := other.Set(ctx, fmt.Sprintf("/q/p%d", i), []byte{byte(j)}, -1); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := other.Create(ctx, "/q/end", nil); err != nil {
		t.Fatal(err)
	}
	// The client's own calls go on while nobody reads the Watcher.
	if _, err := c.Exists(ctx, "/q/end"); err != nil {
		t.Fatal(err)
	}
	eventually(t, testTimeout, "the end marker queued", func() (bool, error) {
		return w.q.Has("/q/end"), nil
	})
	queued := w.q.Len()
	t.Logf("%d events queued for %d changes on %d paths", queued, 2+paths*(sets+1), paths+2)
	// /q and its p0..p4 creations, one event each, and the end marker;
	// one may be in the hand of the goroutine feeding Events.
	if queued > paths+2 {
		t.Fatalf("%d events queued for %d paths", queued, paths+2)
	}
	evs := collect(t, w, func(ev WatchEvent) bool { return ev.Path == "/q/end" })
	last := map[string]WatchEvent{}
	for _, ev := range evs {
		last[ev.Path] = ev
	}
	for i := range paths {
		p := fmt.Sprintf("/q/p%d", i)
		if ev := last[p]; ev.Type != WatchDataChanged || !ev.Coalesced {
			t.Errorf("%s: last event %+v, want a coalesced data change", p, ev)
		}
	}
}

// Through a chroot and a namespace: the server's paths carry both, the
// events the caller's paths.
func TestWatchUnderChroot(t *testing.T) {
	root := "/" + newNamespace(t)
	setup := connect(t, server(t).ConnectString())
	if _, err := setup.Create(testCtx(t), root, nil); err != nil {
		t.Fatal(err)
	}
	c := connect(t, server(t).ConnectString()+root, WithNamespace("ns"))
	ctx := testCtx(t)
	w, err := c.Watch(ctx, "/a", Recursive())
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := c.Create(ctx, "/a/b", nil, CreatingParents()); err != nil {
		t.Fatal(err)
	}
	expectEvent(t, w, WatchCreated, "/a")
	expectEvent(t, w, WatchCreated, "/a/b")
	awaitServerWatches(t, server(t).Addr(), c, root+"/ns/a")
}

// The Watcher's queue (internal/watchq, tested there) flags a path's
// coalesced event and merges resync markers, NewSession if any is; a
// Sync marker is a barrier neither a later change of a path nor a resync
// crosses.
func TestWatchQueue(t *testing.T) {
	w := &Watcher{q: newWatchQueue()}
	w.queue(WatchEvent{Type: WatchResync, Path: "/"})
	w.queue(WatchEvent{Type: WatchCreated, Path: "/a"})
	w.queue(WatchEvent{Type: WatchCreated, Path: "/b"})
	w.queue(WatchEvent{Type: WatchDataChanged, Path: "/a", Zxid: 9})
	w.q.Mark(WatchEvent{Type: WatchSynced})
	w.queue(WatchEvent{Type: WatchDataChanged, Path: "/a", Zxid: 10})
	w.queue(WatchEvent{Type: WatchResync, Path: "/", NewSession: true})
	var got []WatchEvent
	for {
		ev, _, ok := w.q.Next()
		if !ok {
			break
		}
		got = append(got, ev)
	}
	want := []WatchEvent{
		{Type: WatchResync, Path: "/", NewSession: true},
		{Type: WatchCreated, Path: "/b"},
		{Type: WatchDataChanged, Path: "/a", Zxid: 9, Coalesced: true},
		{Type: WatchSynced},
		{Type: WatchDataChanged, Path: "/a", Zxid: 10},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
}

// The other order of ZOOKEEPER-4466: a one-shot GetW set before the
// Watcher (the server turns it persistent). The Watcher gets every change;
// when it goes, the GetW is a one-shot on the server again and still
// fires once, after which no watch of ours is left.
func TestWatchAfterOneShotOnSamePath(t *testing.T) {
	c := connectNS(t, newNamespace(t))
	ctx := testCtx(t)
	addr := server(t).Addr()
	if _, err := c.Create(ctx, "/o", nil); err != nil {
		t.Fatal(err)
	}
	_, _, once, err := c.GetW(ctx, "/o")
	if err != nil {
		t.Fatal(err)
	}
	w, err := c.Watch(ctx, "/o")
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	awaitServerWatches(t, addr, c, c.full("/o"))
	if _, err := c.Set(ctx, "/o", []byte("1"), -1); err != nil {
		t.Fatal(err)
	}
	if ev := waitEvent(t, once, testTimeout, "GetW set before the Watcher"); ev.Type != zk.EventNodeDataChanged {
		t.Fatalf("GetW got %+v", ev)
	}
	// A one-shot again: gone once fired.
	awaitServerWatches(t, addr, c)

	// While the Watcher lives, it gets every change, and the GetW its one.
	_, _, once, err = c.GetW(ctx, "/o")
	if err != nil {
		t.Fatal(err)
	}
	w, err = c.Watch(ctx, "/o")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for i := range 3 {
		if _, err := c.Set(ctx, "/o", []byte{byte(i)}, -1); err != nil {
			t.Fatal(err)
		}
		expectEvent(t, w, WatchDataChanged, "/o")
	}
	waitEvent(t, once, testTimeout, "GetW")
	awaitServerWatches(t, addr, c, c.full("/o"))
}
