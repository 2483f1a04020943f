package framework

import (
	"context"
	"errors"
	"sync/atomic"

	"github.com/go-zookeeper/zk"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/gocurator/curator/connstate"
	"github.com/gocurator/curator/internal/telemetry"
)

// ScopeName is the OpenTelemetry instrumentation scope of the client's
// metrics and spans.
const ScopeName = "github.com/gocurator/curator/framework"

// WithMeterProvider sets where the client's metrics go (see
// docs/observability.md for the list), and the metrics of the recipes run
// on it. The default is OpenTelemetry's global provider, as it is at
// Connect: it records nothing until the application sets one
// (otel.SetMeterProvider), and forwards to it from then on.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return func(o *options) error {
		if mp == nil {
			return invalid("nil meter provider")
		}
		o.meterProvider = mp
		return nil
	}
}

// WithTracerProvider sets where the client's spans go, and the spans of the
// recipes run on it. The default is OpenTelemetry's global provider: spans
// are made once the application sets one (otel.SetTracerProvider), and
// until then none is started, which costs nothing. The client's operations
// make spans only as children of a span that records (a lock's acquire, or
// one of the application's), so a process does not trace each request.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(o *options) error {
		if tp == nil {
			return invalid("nil tracer provider")
		}
		o.tracerProvider = tp
		return nil
	}
}

// MeterProvider returns the provider the client's metrics go to
// (WithMeterProvider's, or the global one), for recipes' own instruments.
func (c *Client) MeterProvider() metric.MeterProvider {
	if c == nil {
		return metricnoop.NewMeterProvider()
	}
	return c.tel.mp
}

// TracerProvider returns the provider the client's spans go to
// (WithTracerProvider's, or the global one), for recipes' own spans.
func (c *Client) TracerProvider() trace.TracerProvider {
	if c == nil {
		return tracenoop.NewTracerProvider()
	}
	return c.tel.tp
}

// Tracing reports whether spans started on the client's TracerProvider can
// be recorded: false for a no-op provider, and for the global default while
// the application has set no provider. Recipes skip their spans then.
func (c *Client) Tracing() bool {
	if c == nil {
		return false
	}
	return telemetry.Tracing(c.tel.tp)
}

// reqKind is the operation of a request, the operation attribute of its
// metrics and the name of its span.
type reqKind uint8

const (
	reqCreate reqKind = iota
	reqDelete
	reqExists
	reqGet
	reqSet
	reqChildren
	reqMulti
	reqCleanup // finding and deleting the node of a failed protected create
	reqSync
	reqWatch // adding or removing a persistent watch (internal/zkconn)
	reqGetACL
	reqSetACL
	reqReconfig
	numReqs
)

var reqNames = [numReqs]string{"create", "delete", "exists", "get", "set", "children", "multi", "cleanup", "sync", "watch", "get_acl", "set_acl", "reconfig"}

// result is the outcome of a request, its result attribute: a small fixed
// set, so the attribute's cardinality is bounded.
type result uint8

const (
	resOK result = iota
	resNoNode
	resNodeExists
	resBadVersion
	resNotEmpty
	resConnectionLoss
	resSessionExpired
	resCanceled
	resDeadline
	resClosed
	resError
	numResults
)

var resultNames = [numResults]string{"ok", "no_node", "node_exists", "bad_version", "not_empty",
	"connection_loss", "session_expired", "canceled", "deadline", "closed", "error"}

func resultOf(err error) result {
	switch {
	case err == nil:
		return resOK
	case errors.Is(err, ErrClosed):
		return resClosed
	case errors.Is(err, context.Canceled):
		return resCanceled
	case errors.Is(err, context.DeadlineExceeded):
		return resDeadline
	case errors.Is(err, zk.ErrNoNode):
		return resNoNode
	case errors.Is(err, zk.ErrNodeExists):
		return resNodeExists
	case errors.Is(err, zk.ErrBadVersion):
		return resBadVersion
	case errors.Is(err, zk.ErrNotEmpty):
		return resNotEmpty
	case errors.Is(err, zk.ErrSessionExpired):
		return resSessionExpired
	case errors.Is(err, zk.ErrConnectionClosed):
		return resConnectionLoss
	default:
		return resError
	}
}

// Where a session expiry was noticed.
const (
	expiryClient = iota // the client-side watchdog declared it
	expiryServer        // a server said so
	numExpiries
)

// Attribute keys of the client's metrics and spans.
const (
	attrOperation    = attribute.Key("curator.operation")
	attrResult       = attribute.Key("curator.result")
	attrState        = attribute.Key("curator.state")
	attrExpirySource = attribute.Key("curator.expiry.source")
)

// clientTelemetry is the client's instruments and, computed once at
// Connect, the options of every measurement it makes: recording one
// allocates nothing.
type clientTelemetry struct {
	mp     metric.MeterProvider
	tp     trace.TracerProvider
	tracer trace.Tracer

	requests    metric.Float64Histogram
	retries     metric.Int64Counter
	states      metric.Int64Counter
	expirations metric.Int64Counter
	recoveries  metric.Int64Counter
	pending     metric.Int64UpDownCounter

	// state is the connection state last entered, read by the
	// connection-state gauge's callback; 0 (no state yet) reports none.
	state atomic.Int32
	// gauge is the connection-state gauge's callback, unregistered by
	// close; nil if the provider made none.
	gauge metric.Registration

	reqOpts    [numReqs][numResults][]metric.RecordOption
	retryOpts  [numReqs][]metric.AddOption
	stateOpts  [connstate.ReadOnly + 1][]metric.AddOption
	expiryOpts [numExpiries][]metric.AddOption
	spanNames  [numReqs]string
	spanOpts   [numReqs][]trace.SpanStartOption
}

func newClientTelemetry(o *options) *clientTelemetry {
	t := &clientTelemetry{mp: o.meterProvider, tp: o.tracerProvider}
	if t.mp == nil {
		t.mp = otel.GetMeterProvider()
	}
	if t.tp == nil {
		t.tp = otel.GetTracerProvider()
	}
	t.tracer = t.tp.Tracer(ScopeName, trace.WithInstrumentationVersion(telemetry.Version()))
	m := t.mp.Meter(ScopeName, metric.WithInstrumentationVersion(telemetry.Version()))
	noop := metricnoop.Meter{}
	fallbackH, _ := noop.Float64Histogram("")
	fallbackC, _ := noop.Int64Counter("")
	fallbackU, _ := noop.Int64UpDownCounter("")
	h, err := m.Float64Histogram("curator.client.request.duration", metric.WithUnit("s"),
		metric.WithDescription("Duration of the client's operations, retries included, by operation and result."),
		metric.WithExplicitBucketBoundaries(telemetry.LatencyBuckets...))
	t.requests = telemetry.Must(h, err, fallbackH)
	c, err := m.Int64Counter("curator.client.retries", metric.WithUnit("{retry}"),
		metric.WithDescription("Attempts of operations after their first, by operation."))
	t.retries = telemetry.Must(c, err, fallbackC)
	c, err = m.Int64Counter("curator.client.state_transitions", metric.WithUnit("{transition}"),
		metric.WithDescription("Connection state changes, by the state entered."))
	t.states = telemetry.Must(c, err, fallbackC)
	c, err = m.Int64Counter("curator.client.session_expirations", metric.WithUnit("{expiration}"),
		metric.WithDescription("Sessions lost, by who noticed: the client's expiry watchdog or a server."))
	t.expirations = telemetry.Must(c, err, fallbackC)
	c, err = m.Int64Counter("curator.client.protected_create.recoveries", metric.WithUnit("{recovery}"),
		metric.WithDescription("Protected creates whose reply was lost, found by their protected name on a retry."))
	t.recoveries = telemetry.Must(c, err, fallbackC)
	u, err := m.Int64UpDownCounter("curator.client.guaranteed_deletes.pending", metric.WithUnit("{delete}"),
		metric.WithDescription("Guaranteed deletes (and clean-ups of failed protected creates) still retrying in the background."))
	t.pending = telemetry.Must(u, err, fallbackU)

	for r := range numReqs {
		op := attrOperation.String(reqNames[r])
		for res := range numResults {
			set := attribute.NewSet(op, attrResult.String(resultNames[res]))
			t.reqOpts[r][res] = telemetry.RecordOpts(metric.WithAttributeSet(set))
		}
		t.retryOpts[r] = telemetry.AddOpts(metric.WithAttributeSet(attribute.NewSet(op)))
		t.spanNames[r] = "curator.client." + reqNames[r]
		t.spanOpts[r] = []trace.SpanStartOption{
			trace.WithSpanKind(trace.SpanKindClient),
			trace.WithAttributes(op, attribute.String("db.system.name", "zookeeper")),
		}
	}
	for s := connstate.Connected; s <= connstate.ReadOnly; s++ {
		t.stateOpts[s] = telemetry.AddOpts(metric.WithAttributeSet(attribute.NewSet(attrState.String(stateNames[s]))))
	}
	t.expiryOpts[expiryClient] = telemetry.AddOpts(metric.WithAttributeSet(attribute.NewSet(attrExpirySource.String("client"))))
	t.expiryOpts[expiryServer] = telemetry.AddOpts(metric.WithAttributeSet(attribute.NewSet(attrExpirySource.String("server"))))
	t.zero()
	t.registerStateGauge(m)
	return t
}

// zero makes every series of the client's counters with a known attribute
// set exist at 0 from Connect on, so that a healthy process exports
// "0 retries" rather than nothing: a dashboard panel shows 0 instead of
// "No data", and increase() over a counter's first increment counts it.
func (t *clientTelemetry) zero() {
	ctx := context.Background()
	for r := range numReqs {
		t.retries.Add(ctx, 0, t.retryOpts[r]...)
	}
	for s := connstate.Connected; s <= connstate.ReadOnly; s++ {
		t.states.Add(ctx, 0, t.stateOpts[s]...)
	}
	for _, opts := range t.expiryOpts {
		t.expirations.Add(ctx, 0, opts...)
	}
	t.recoveries.Add(ctx, 0)
	t.pending.Add(ctx, 0)
}

// registerStateGauge registers curator.client.connection.state: one series
// per state, 1 for the state the client is in and 0 for the others (a
// stat panel shows the state whose series is 1; an alert fires on
// suspended or lost for a while). A provider that cannot make it gets none.
// The callback is unregistered when the client closes (close): a closed
// client reports no state.
func (t *clientTelemetry) registerStateGauge(m metric.Meter) {
	g, err := m.Int64ObservableGauge("curator.client.connection.state", metric.WithUnit("{state}"),
		metric.WithDescription("The client's connection state: 1 for the state it is in, 0 for the others."))
	if err != nil || g == nil {
		return
	}
	var opts [connstate.ReadOnly + 1][]metric.ObserveOption
	for s := connstate.Connected; s <= connstate.ReadOnly; s++ {
		opts[s] = []metric.ObserveOption{metric.WithAttributeSet(attribute.NewSet(attrState.String(stateNames[s])))}
	}
	t.gauge, _ = m.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		cur := connstate.State(t.state.Load())
		if cur < connstate.Connected || cur > connstate.ReadOnly {
			return nil
		}
		for s := connstate.Connected; s <= connstate.ReadOnly; s++ {
			v := int64(0)
			if s == cur {
				v = 1
			}
			o.ObserveInt64(g, v, opts[s]...)
		}
		return nil
	}, g)
}

// close unregisters the connection-state gauge's callback.
func (t *clientTelemetry) close() {
	if t.gauge != nil {
		_ = t.gauge.Unregister()
	}
}

// stateNames are the state attribute's values.
var stateNames = [connstate.ReadOnly + 1]string{
	connstate.Connected:   "connected",
	connstate.Suspended:   "suspended",
	connstate.Reconnected: "reconnected",
	connstate.Lost:        "lost",
	connstate.ReadOnly:    "read_only",
}

// retried counts an attempt of req after its first.
func (t *clientTelemetry) retried(ctx context.Context, req reqKind) {
	t.retries.Add(ctx, 1, t.retryOpts[req]...)
}

// stateChanged counts the client's entering s, and makes it the state
// the connection-state gauge reports.
func (t *clientTelemetry) stateChanged(s connstate.State) {
	if s >= connstate.Connected && s <= connstate.ReadOnly {
		t.state.Store(int32(s))
		t.states.Add(context.Background(), 1, t.stateOpts[s]...)
	}
}

// expired counts a session lost, noticed by source (expiryClient or
// expiryServer).
func (t *clientTelemetry) expired(source int) {
	t.expirations.Add(context.Background(), 1, t.expiryOpts[source]...)
}

// recovered counts a protected create found by its name on a retry.
func (t *clientTelemetry) recovered() { t.recoveries.Add(context.Background(), 1) }

// backgroundStarted and backgroundEnded count the background deletes
// pending.
func (t *clientTelemetry) backgroundStarted() { t.pending.Add(context.Background(), 1) }
func (t *clientTelemetry) backgroundEnded()   { t.pending.Add(context.Background(), -1) }
