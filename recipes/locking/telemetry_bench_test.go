package locking

import (
	"context"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"go.uber.org/zap"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/zktest"
)

// BenchmarkTelemetryOverhead measures what the instrumentation adds to one
// uncontended acquire-and-release cycle of the loop when nothing is
// configured (the global providers, no SDK): the acquire's measures and
// events, and the hold's start and end. Compared with a cycle's time (a
// round trip to ZooKeeper and back for the create, another for the
// delete), it bounds the cost without the noise of a network benchmark.
func BenchmarkTelemetryOverhead(b *testing.B) {
	srv := zktest.StartServer(b)
	c, err := framework.Connect(context.Background(), srv.ConnectString())
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	l := New(c, "/bench/telemetry", StandardDriver{LockName: "lock-"})
	stat := &zk.Stat{Czxid: 1, EphemeralOwner: c.SessionID()}
	node := "/bench/telemetry/_c_00000000-0000-0000-0000-000000000000-lock-0000000000"
	listing := []string{"_c_00000000-0000-0000-0000-000000000000-lock-0000000000"}
	h := newHold(c, node, stat, zap.NewNop())
	defer func() { _ = h.Release(context.Background()) }()
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		actx, acq := l.startAcquire(ctx, true)
		acq.created(node)
		(&acq).listed(listing, listing[0])
		acq.end(actx, nil, nil, nil)
		h.mu.Lock()
		h.tel = holdTelemetry{t: acq.t, start: time.Now()}
		acq.t.holders.Add(ctx, 1, acq.t.base...)
		acq.t.liveAdd(&h.tel, h.tel.start)
		h.tel.ended(nil, "")
		h.mu.Unlock()
	}
}
