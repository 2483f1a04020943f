package framework

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/gocurator/curator/connstate"
	"github.com/gocurator/curator/internal/zkconn"
	"github.com/gocurator/curator/zktest"
)

// After a reconnection of a session with watches set, no reply to a request
// of ours reaches go-zookeeper before it has written its setWatches request:
// go-zookeeper reads its last zxid, unsynchronised, while it builds that
// request, and its receive loop writes it for every reply (the race
// detector's report in CI). A client with 50 watches set keeps requests
// coming through a cut, queued in go-zookeeper while it is disconnected so
// that they go out first on the new connection; the wire's log must show no
// reply handed on before setWatches was written.
func TestRequestsWaitForWatchesSetAgain(t *testing.T) {
	zkconn.RecordOps(true)
	defer zkconn.RecordOps(false)
	proxy := zktest.NewProxy(t, server(t).Addr())
	c := connect(t, proxy.Addr(), WithNamespace(newNamespace(t)), WithSessionTimeout(10*time.Second))
	ctx := testCtx(t)
	for i := range 50 {
		p := fmt.Sprintf("/w/n%02d", i)
		if _, err := c.Create(ctx, p, nil, CreatingParents()); err != nil {
			t.Fatal(err)
		}
		if _, _, _, err := c.GetW(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	states := record(c)
	defer states.cancel()

	// Requests made on go-zookeeper itself while it is disconnected wait
	// in its queue and go out first on the new connection, before its
	// setWatches: the case the framework's own requests avoid but cannot
	// rule out (one queued as the connection drops).
	raw := c.Conn()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				_, _, _ = raw.Exists(c.full("/w"))
			}
		}()
	}
	proxy.Cut()
	states.expect(t, testTimeout, connstate.Suspended)
	proxy.Restore()
	states.expect(t, testTimeout, connstate.Reconnected)
	// One request of our own through the new connection, then look at
	// what was written.
	if _, err := c.Exists(ctx, "/w"); err != nil {
		t.Fatal(err)
	}
	close(stop)
	wg.Wait()

	c.mu.Lock()
	w := c.h.wire
	c.mu.Unlock()
	ops := w.WrittenOps()
	const opSetWatches = 101
	set := false
	for _, op := range ops {
		switch op {
		case opSetWatches:
			set = true
		case zkconn.OpReplyReleased:
			if !set {
				t.Fatalf("a reply was handed on before setWatches was written (held past its bound): %v", ops[:min(len(ops), 12)])
			}
		case zkconn.OpReplyEarly:
			t.Fatalf("a reply to a request reached go-zookeeper before setWatches was written: %v", ops[:min(len(ops), 12)])
		}
	}
	if !set {
		t.Fatalf("no setWatches after the reconnection (opcodes %v)", ops[:min(len(ops), 12)])
	}
}
