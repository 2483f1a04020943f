package framework_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"go.opentelemetry.io/otel/attribute"

	"github.com/gocurator/curator/connstate"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/telemetry"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/retry"
	"github.com/gocurator/curator/telemetrytests/internal/oteltest"
	"github.com/gocurator/curator/zktest"
)

// The client's metrics, read back with the SDK's in-memory reader: requests
// by operation and result, a retry and a protected-create recovery across a
// lost reply, state transitions, and a guaranteed delete pending while the
// connection is cut; client spans only under a recording parent.
func TestTelemetryClient(t *testing.T) {
	ns := testkit.Unique(t)
	tel := oteltest.New(t)
	proxy := zktest.NewProxy(t, zkAddr)
	c := connect(t, proxy.Addr(), framework.WithNamespace(ns),
		framework.WithMeterProvider(tel.Meters), framework.WithTracerProvider(tel.Traces),
		framework.WithRetryPolicy(retry.NTimes(20, 100*time.Millisecond)),
		framework.WithSessionTimeout(10*time.Second))
	direct := connect(t, zkAddr, framework.WithNamespace(ns))
	ctx := testkit.Ctx(t)
	states := record(c)
	defer states.cancel()
	op := func(name string) attribute.KeyValue { return attribute.String("curator.operation", name) }
	res := func(name string) attribute.KeyValue { return attribute.String("curator.result", name) }
	const requests = "curator.client.request.duration"
	checkState(t, tel, "connected")

	if _, err := c.Create(ctx, "/dir", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Create(ctx, "/dir", nil); !errors.Is(err, zk.ErrNodeExists) {
		t.Fatalf("second create: %v, want ErrNodeExists", err)
	}
	if _, _, err := c.Get(ctx, "/missing"); !errors.Is(err, zk.ErrNoNode) {
		t.Fatalf("get of a missing node: %v, want ErrNoNode", err)
	}
	for _, tt := range []struct {
		op, res string
		want    uint64
	}{{"create", "ok", 1}, {"create", "node_exists", 1}, {"get", "no_node", 1}, {"get", "ok", 0}} {
		if got := tel.Count(t, requests, op(tt.op), res(tt.res)); got != tt.want {
			t.Errorf("requests %s/%s = %d, want %d", tt.op, tt.res, got, tt.want)
		}
	}
	if got := tel.Sum(t, "curator.client.state_transitions", attribute.String("curator.state", "connected")); got != 1 {
		t.Errorf("transitions to connected = %d, want 1", got)
	}

	// A request without a recording span in its context makes none; one
	// under a span is its child.
	if n := len(tel.Spans.Ended()); n != 0 {
		t.Fatalf("%d spans without a parent, want none", n)
	}
	pctx, parent := tel.Traces.Tracer("test").Start(ctx, "parent")
	if _, err := c.Exists(pctx, "/dir"); err != nil {
		t.Fatal(err)
	}
	parent.End()
	spans := tel.Ended("curator.client.exists")
	if len(spans) != 1 || spans[0].Parent().SpanID() != parent.SpanContext().SpanID() {
		t.Fatalf("exists spans = %v, want one child of the parent span", spans)
	}

	// A lost reply: the protected create is retried and finds its node.
	fired := proxy.LoseNextCreateReply()
	if _, err := c.Create(ctx, "/dir/p-", nil, framework.WithMode(framework.EphemeralSequential), framework.Protected()); err != nil {
		t.Fatal(err)
	}
	testkit.WaitClosed(t, fired, "lost-reply fault")
	states.expect(t, testkit.Deadline, connstate.Suspended, connstate.Reconnected)
	if got := tel.Sum(t, "curator.client.protected_create.recoveries"); got != 1 {
		t.Errorf("protected-create recoveries = %d, want 1", got)
	}
	if got := tel.Sum(t, "curator.client.retries", op("create")); got < 1 {
		t.Errorf("create retries = %d, want at least 1", got)
	}
	for _, s := range []string{"suspended", "reconnected"} {
		if got := tel.Sum(t, "curator.client.state_transitions", attribute.String("curator.state", s)); got != 1 {
			t.Errorf("transitions to %s = %d, want 1", s, got)
		}
	}
	checkState(t, tel, "reconnected")

	// A guaranteed delete that fails while cut off is pending until the
	// connection is back.
	if _, err := c.Create(ctx, "/gone", nil); err != nil {
		t.Fatal(err)
	}
	proxy.Cut()
	states.expect(t, testkit.Deadline, connstate.Suspended)
	checkState(t, tel, "suspended")
	dctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	err := c.Delete(dctx, "/gone", framework.Guaranteed())
	cancel()
	if err == nil {
		t.Fatal("delete while cut off succeeded")
	}
	const pending = "curator.client.guaranteed_deletes.pending"
	if got := tel.Sum(t, pending); got != 1 {
		t.Fatalf("pending guaranteed deletes = %d, want 1", got)
	}
	if got := tel.Count(t, requests, op("delete"), res("deadline")); got != 1 {
		t.Errorf("requests delete/deadline = %d, want 1", got)
	}
	proxy.Restore()
	states.expect(t, testkit.Deadline, connstate.Reconnected)
	deadline := time.Now().Add(testkit.Deadline)
	for tel.Sum(t, pending) != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the guaranteed delete is still pending")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if st, err := direct.Exists(ctx, "/gone"); err != nil || st != nil {
		t.Fatalf("after the guaranteed delete: exists = %v, %v; want gone", st, err)
	}
}

// A healthy client's counters exist at 0 from Connect, before anything
// happened to count: without this, the dashboard's retries, expirations,
// recoveries and pending-deletes panels showed "No data" on a healthy
// process, and increase() missed each counter's first increment. The
// operations and states are those the observability guide names, which
// the framework's TestTelemetryNamesAreDocumented holds to be exactly the
// client's.
func TestTelemetryZeroAtConnect(t *testing.T) {
	tel := oteltest.New(t)
	connect(t, zkAddr, framework.WithNamespace(testkit.Unique(t)), framework.WithMeterProvider(tel.Meters))

	type series struct {
		name  string
		attrs []attribute.KeyValue
	}
	var want []series
	for _, o := range docValues(t, "curator.operation") {
		want = append(want, series{"curator.client.retries", []attribute.KeyValue{attribute.String("curator.operation", o)}})
	}
	for _, s := range []string{"suspended", "reconnected", "lost", "read_only"} {
		want = append(want, series{"curator.client.state_transitions", []attribute.KeyValue{attribute.String("curator.state", s)}})
	}
	for _, src := range []string{"client", "server"} {
		want = append(want, series{"curator.client.session_expirations", []attribute.KeyValue{attribute.String("curator.expiry.source", src)}})
	}
	want = append(want,
		series{"curator.client.protected_create.recoveries", nil},
		series{"curator.client.guaranteed_deletes.pending", nil})
	for _, w := range want {
		if !tel.Has(t, w.name, w.attrs...) {
			t.Errorf("%s%v: no series after Connect, want one at 0", w.name, w.attrs)
		} else if got := tel.Sum(t, w.name, w.attrs...); got != 0 {
			t.Errorf("%s%v = %d after Connect, want 0", w.name, w.attrs, got)
		}
	}
	checkState(t, tel, "connected")
	// The scope is the framework's, with the library's version as this
	// binary knows it: none, since a test binary records no versions of
	// its dependencies; the framework's TestTelemetryScopeVersion checks
	// the version where the library is the main module.
	if v, ok := tel.ScopeVersion(t, framework.ScopeName); !ok || v != telemetry.Version() {
		t.Errorf("scope %s: version %q (recorded: %v), want the module's, %q", framework.ScopeName, v, ok, telemetry.Version())
	}
}

// checkState fails t unless the connection-state gauge reports want: 1 for
// it, 0 for every other state the observability guide names.
func checkState(t *testing.T, tel *oteltest.Telemetry, want string) {
	t.Helper()
	for _, s := range docValues(t, "curator.state") {
		v, ok := tel.GaugeValue(t, "curator.client.connection.state", attribute.String("curator.state", s))
		wantV := 0.0
		if s == want {
			wantV = 1
		}
		if !ok || v != wantV {
			t.Errorf("connection state %s = %v (reported: %v), want %v", s, v, ok, wantV)
		}
	}
}
