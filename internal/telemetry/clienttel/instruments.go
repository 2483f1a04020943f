package clienttel

import (
	"context"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/trace"

	"github.com/gocurator/curator/connstate"
	"github.com/gocurator/curator/internal/telemetry"
)

// Instruments are a client's instruments and, computed once by New, the
// options of every measurement they make.
type Instruments struct {
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
	// Close; nil if the provider made none.
	gauge metric.Registration

	reqOpts    [numOps][numResults][]metric.RecordOption
	retryOpts  [numOps][]metric.AddOption
	stateOpts  [connstate.ReadOnly + 1][]metric.AddOption
	expiryOpts [numExpiries][]metric.AddOption
	spanNames  [numOps]string
	spanOpts   [numOps][]trace.SpanStartOption
}

// New makes the instruments of a client on mp and tp (nil: OpenTelemetry's
// global providers, as they are now), under the instrumentation scope
// scope. A provider that fails to make an instrument gets a no-op one.
// Every counter series with a known attribute set exists at 0 from here
// on. Close unregisters what New registered.
func New(mp metric.MeterProvider, tp trace.TracerProvider, scope string) *Instruments {
	t := &Instruments{mp: mp, tp: tp}
	if t.mp == nil {
		t.mp = otel.GetMeterProvider()
	}
	if t.tp == nil {
		t.tp = otel.GetTracerProvider()
	}
	t.tracer = t.tp.Tracer(scope, trace.WithInstrumentationVersion(telemetry.Version()))
	m := t.mp.Meter(scope, metric.WithInstrumentationVersion(telemetry.Version()))
	t.makeInstruments(m)
	t.makeOptions()
	t.zero()
	t.registerStateGauge(m)
	return t
}

// makeInstruments makes the histogram and counters on m.
func (t *Instruments) makeInstruments(m metric.Meter) {
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
}

// makeOptions computes the options of every measurement and span.
func (t *Instruments) makeOptions() {
	for r := range numOps {
		op := attrOperation.String(opNames[r])
		for res := range numResults {
			set := attribute.NewSet(op, attrResult.String(resultNames[res]))
			t.reqOpts[r][res] = telemetry.RecordOpts(metric.WithAttributeSet(set))
		}
		t.retryOpts[r] = telemetry.AddOpts(metric.WithAttributeSet(attribute.NewSet(op)))
		t.spanNames[r] = "curator.client." + opNames[r]
		t.spanOpts[r] = []trace.SpanStartOption{
			trace.WithSpanKind(trace.SpanKindClient),
			trace.WithAttributes(op, attribute.String("db.system.name", "zookeeper")),
		}
	}
	for s := connstate.Connected; s <= connstate.ReadOnly; s++ {
		t.stateOpts[s] = telemetry.AddOpts(metric.WithAttributeSet(attribute.NewSet(attrState.String(stateNames[s]))))
	}
	t.expiryOpts[ExpiryClient] = telemetry.AddOpts(metric.WithAttributeSet(attribute.NewSet(attrExpirySource.String("client"))))
	t.expiryOpts[ExpiryServer] = telemetry.AddOpts(metric.WithAttributeSet(attribute.NewSet(attrExpirySource.String("server"))))
}

// zero makes every series of the client's counters with a known attribute
// set exist at 0 from Connect on, so that a healthy process exports
// "0 retries" rather than nothing: a dashboard panel shows 0 instead of
// "No data", and increase() over a counter's first increment counts it.
func (t *Instruments) zero() {
	ctx := context.Background()
	for r := range numOps {
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
// The callback is unregistered when the client closes (Close): a closed
// client reports no state.
func (t *Instruments) registerStateGauge(m metric.Meter) {
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

// Close unregisters the connection-state gauge's callback.
func (t *Instruments) Close() {
	if t.gauge != nil {
		_ = t.gauge.Unregister()
	}
}

// MeterProvider returns the provider the instruments were made on.
func (t *Instruments) MeterProvider() metric.MeterProvider { return t.mp }

// TracerProvider returns the provider the spans are started on.
func (t *Instruments) TracerProvider() trace.TracerProvider { return t.tp }

// Request is the measurement of one request, from Start to End.
type Request struct {
	t     *Instruments
	op    Op
	start time.Time
	span  trace.Span // nil: no span
}

// Start begins measuring a request of op. It returns the context to run
// the request under: ctx with a child span when ctx's span records, ctx
// itself otherwise (a process does not trace each request).
func (t *Instruments) Start(ctx context.Context, op Op) (context.Context, Request) {
	r := Request{t: t, op: op, start: time.Now()}
	if parent := trace.SpanFromContext(ctx); parent.IsRecording() {
		ctx, r.span = t.tracer.Start(ctx, t.spanNames[op], t.spanOpts[op]...)
	}
	return ctx, r
}

// End records the request's duration with its result, and ends its span
// (an error status and the result attribute unless res is ResOK). ctx is
// Start's (nil is allowed).
func (r Request) End(ctx context.Context, res Result) {
	if ctx == nil {
		ctx = context.Background()
	}
	t := r.t
	t.requests.Record(ctx, time.Since(r.start).Seconds(), t.reqOpts[r.op][res]...)
	if r.span != nil {
		if res != ResOK {
			r.span.SetStatus(codes.Error, resultNames[res])
			r.span.SetAttributes(attrResult.String(resultNames[res]))
		}
		r.span.End()
	}
}

// Retried counts an attempt of op after its first.
func (t *Instruments) Retried(ctx context.Context, op Op) {
	t.retries.Add(ctx, 1, t.retryOpts[op]...)
}

// StateChanged counts the client's entering s, and makes it the state
// the connection-state gauge reports.
func (t *Instruments) StateChanged(s connstate.State) {
	if s >= connstate.Connected && s <= connstate.ReadOnly {
		t.state.Store(int32(s))
		t.states.Add(context.Background(), 1, t.stateOpts[s]...)
	}
}

// Expired counts a session lost, noticed by source.
func (t *Instruments) Expired(source Expiry) {
	t.expirations.Add(context.Background(), 1, t.expiryOpts[source]...)
}

// Recovered counts a protected create found by its name on a retry.
func (t *Instruments) Recovered() { t.recoveries.Add(context.Background(), 1) }

// BackgroundStarted and BackgroundEnded count the background deletes
// pending.
func (t *Instruments) BackgroundStarted() { t.pending.Add(context.Background(), 1) }

// BackgroundEnded: see BackgroundStarted.
func (t *Instruments) BackgroundEnded() { t.pending.Add(context.Background(), -1) }
