package locking

import (
	"context"
	"errors"
	"path"
	"reflect"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/trace"

	"github.com/gocurator/curator/connstate"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/telemetry"
	"github.com/gocurator/curator/recipes/internal/lockhook"
)

// ScopeName is the OpenTelemetry instrumentation scope of the lock loop's
// metrics and spans, which every lock recipe runs on. They go to the
// client's providers (framework.WithMeterProvider, WithTracerProvider).
const ScopeName = "github.com/gocurator/curator/recipes/locking"

// Attribute keys of the lock metrics and spans. Every metric carries
// attrKind and attrName, both of bounded cardinality: never a node name, a
// UUID or a session id.
const (
	// attrKind is the recipe: mutex, rwlock_read, rwlock_write, semaphore,
	// leader, ... (WithKind; by default derived from the driver).
	attrKind = attribute.Key("curator.lock.kind")
	// attrName is the lock's name: WithName's, by default its path.
	attrName = attribute.Key("curator.lock.name")
	// attrResult is how an acquire ended: acquired, would_block,
	// canceled, deadline, lost, error.
	attrResult = attribute.Key("curator.result")
	// attrReason is why a hold was lost: suspended, session_expired,
	// read_only, connection, node_deleted, revoked.
	attrReason = attribute.Key("curator.loss.reason")
	// attrEnd is how a hold ended: released, lost, closed.
	attrEnd = attribute.Key("curator.hold.end")
	// attrNode and attrToken are span attributes only.
	attrNode  = attribute.Key("curator.lock.node")
	attrToken = attribute.Key("curator.lock.fencing_token")
)

// WithKind sets the kind attribute of the loop's metrics and spans, such as
// "mutex" (default: derived from the driver: its package's name, mutex for
// a StandardDriver of "lock-" nodes).
func WithKind(kind string) Option { return func(l *Loop) { l.tel.kind = kind } }

// WithName sets the name attribute of the loop's metrics and spans
// (default: the lock path). Give locks whose paths are made per entity
// (/locks/order-1234) a name shared by all of them, such as "orders": every
// distinct name is a series of each metric.
func WithName(name string) Option { return func(l *Loop) { l.tel.name = name } }

// lockTelemetry is a Loop's telemetry: its options, and the instruments,
// made at the first acquire (not by New, which recipes also call for one
// listing) and shared by every acquire of the loop.
type lockTelemetry struct {
	kind, name string
	once       sync.Once
	inst       *lockInstruments
}

// Values of attrResult, attrEnd and attrReason.
type (
	acquireResult uint8
	holdEnd       uint8
	lossReason    uint8
)

const (
	acquired acquireResult = iota
	wouldBlock
	canceled
	deadline
	lost
	failed
	numAcquireResults
)

const (
	endReleased holdEnd = iota
	endLost
	endClosed
	numHoldEnds
)

const (
	reasonSuspended lossReason = iota
	reasonSessionExpired
	reasonReadOnly
	reasonConnection
	reasonNodeDeleted
	reasonRevoked
	numLossReasons
)

var (
	acquireResultNames = [numAcquireResults]string{"acquired", "would_block", "canceled", "deadline", "lost", "error"}
	holdEndNames       = [numHoldEnds]string{"released", "lost", "closed"}
	lossReasonNames    = [numLossReasons]string{"suspended", "session_expired", "read_only", "connection", "node_deleted", "revoked"}
)

func resultOf(err error) acquireResult {
	switch {
	case err == nil:
		return acquired
	case errors.Is(err, ErrWouldBlock):
		return wouldBlock
	case errors.Is(err, context.Canceled):
		return canceled
	case errors.Is(err, context.DeadlineExceeded):
		return deadline
	case errors.Is(err, ErrLockLost):
		return lost
	default:
		return failed
	}
}

// lockInstruments are the instruments of one Loop and, computed once,
// the options of every measurement: recording one allocates nothing.
type lockInstruments struct {
	c      *framework.Client
	tracer trace.Tracer

	acquire   metric.Float64Histogram
	hold      metric.Float64Histogram
	waiters   metric.Int64UpDownCounter
	holders   metric.Int64UpDownCounter
	losses    metric.Int64Counter
	handovers metric.Int64Counter

	base        []metric.AddOption // kind and name
	acquireOpts [numAcquireResults][]metric.RecordOption
	holdOpts    [numHoldEnds][]metric.RecordOption
	lossOpts    [numLossReasons][]metric.AddOption
	spanOpts    []trace.SpanStartOption

	// The holds alive, for the oldest-hold gauge (telemetry_oldest.go).
	oldest      *oldestHolds // nil: no gauge
	observeOpts []metric.ObserveOption
	liveMu      sync.Mutex
	live        map[*holdTelemetry]time.Time
}

// instruments returns l's instruments, made on first use.
func (l *Loop) instruments() *lockInstruments {
	l.tel.once.Do(func() { l.tel.inst = newLockInstruments(l) })
	return l.tel.inst
}

func newLockInstruments(l *Loop) *lockInstruments {
	kind, name := l.tel.kind, l.tel.name
	if kind == "" {
		kind = kindOf(l.driver)
	}
	if name == "" {
		name = l.path
	}
	t := &lockInstruments{c: l.c, tracer: l.c.TracerProvider().Tracer(ScopeName, trace.WithInstrumentationVersion(telemetry.Version()))}
	m := l.c.MeterProvider().Meter(ScopeName, metric.WithInstrumentationVersion(telemetry.Version()))
	noop := metricnoop.Meter{}
	fallbackH, _ := noop.Float64Histogram("")
	fallbackC, _ := noop.Int64Counter("")
	fallbackU, _ := noop.Int64UpDownCounter("")
	h, err := m.Float64Histogram("curator.lock.acquire.duration", metric.WithUnit("s"),
		metric.WithDescription("Duration of lock acquires, waiting included, by result."),
		metric.WithExplicitBucketBoundaries(telemetry.LatencyBuckets...))
	t.acquire = telemetry.Must(h, err, fallbackH)
	h, err = m.Float64Histogram("curator.lock.hold.duration", metric.WithUnit("s"),
		metric.WithDescription("Duration of lock holds, from the acquire's return to their end, by how they ended."),
		metric.WithExplicitBucketBoundaries(telemetry.HoldBuckets...))
	t.hold = telemetry.Must(h, err, fallbackH)
	u, err := m.Int64UpDownCounter("curator.lock.waiters", metric.WithUnit("{waiter}"),
		metric.WithDescription("Acquires of this process waiting in a lock's queue."))
	t.waiters = telemetry.Must(u, err, fallbackU)
	u, err = m.Int64UpDownCounter("curator.lock.holders", metric.WithUnit("{holder}"),
		metric.WithDescription("Holds of this process on a lock."))
	t.holders = telemetry.Must(u, err, fallbackU)
	c, err := m.Int64Counter("curator.lock.losses", metric.WithUnit("{loss}"),
		metric.WithDescription("Holds lost (or asked to be given up) before their release, by reason."))
	t.losses = telemetry.Must(c, err, fallbackC)
	c, err = m.Int64Counter("curator.lock.handovers", metric.WithUnit("{handover}"),
		metric.WithDescription("Acquires that waited for a holder and were handed the lock when it left."))
	t.handovers = telemetry.Must(c, err, fallbackC)

	k, n := attrKind.String(kind), attrName.String(name)
	t.base = telemetry.AddOpts(metric.WithAttributeSet(attribute.NewSet(k, n)))
	for r := range numAcquireResults {
		set := attribute.NewSet(k, n, attrResult.String(acquireResultNames[r]))
		t.acquireOpts[r] = telemetry.RecordOpts(metric.WithAttributeSet(set))
	}
	for e := range numHoldEnds {
		set := attribute.NewSet(k, n, attrEnd.String(holdEndNames[e]))
		t.holdOpts[e] = telemetry.RecordOpts(metric.WithAttributeSet(set))
	}
	for r := range numLossReasons {
		set := attribute.NewSet(k, n, attrReason.String(lossReasonNames[r]))
		t.lossOpts[r] = telemetry.AddOpts(metric.WithAttributeSet(set))
	}
	t.spanOpts = []trace.SpanStartOption{trace.WithAttributes(k, n)}
	t.oldest = oldestFor(l.c.MeterProvider())
	t.observeOpts = []metric.ObserveOption{metric.WithAttributeSet(attribute.NewSet(k, n))}
	// The lock's counters exist at 0 from its first acquire, so that a
	// lock never lost nor handed over shows 0, not "No data", and
	// increase() counts the first loss.
	ctx := context.Background()
	t.holders.Add(ctx, 0, t.base...)
	t.waiters.Add(ctx, 0, t.base...)
	t.handovers.Add(ctx, 0, t.base...)
	for r := range numLossReasons {
		t.losses.Add(ctx, 0, t.lossOpts[r]...)
	}
	return t
}

// kindOf names the recipe of driver d: a StandardDriver by its node name
// (the mutex's "lock-"), any other by its package, the read/write lock by
// side.
func kindOf(d Driver) string {
	var sd *StandardDriver
	switch d := d.(type) {
	case StandardDriver:
		sd = &d
	case *StandardDriver:
		sd = d
	}
	if sd != nil {
		switch sd.LockName {
		case "lock-":
			return "mutex"
		case "latch-":
			return "leader"
		case "lease-":
			return "semaphore"
		}
		return "lock"
	}
	t := reflect.TypeOf(d)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	pkg := path.Base(t.PkgPath())
	if pkg == "rwlock" {
		switch tn := strings.ToLower(t.Name()); {
		case strings.HasPrefix(tn, "read"):
			return "rwlock_read"
		case strings.HasPrefix(tn, "write"):
			return "rwlock_write"
		}
	}
	if pkg == "" || pkg == "." || pkg == "locking" {
		return "lock"
	}
	return pkg
}

// acquisition measures one Acquire: its duration and result, whether it
// waited, and its span (nil when the client does not trace).
type acquisition struct {
	t       *lockInstruments
	start   time.Time
	span    trace.Span
	waiting bool
}

// startAcquire starts measuring an Acquire; with tracing, ctx carries its
// span, so the client's requests made for it are its children.
func (l *Loop) startAcquire(ctx context.Context, wait bool) (context.Context, acquisition) {
	t := l.instruments()
	a := acquisition{t: t, start: time.Now()}
	if l.c.Tracing() {
		ctx, a.span = t.tracer.Start(ctx, "curator.lock.acquire", t.spanOpts...)
		a.span.SetAttributes(attribute.Bool("curator.lock.wait", wait))
	}
	return ctx, a
}

// created notes our node's creation (span event "created").
func (a *acquisition) created(node string) {
	if a != nil && a.span != nil {
		a.span.AddEvent("created", trace.WithAttributes(attrNode.String(node)))
	}
}

// listed notes a look at the queue (span event "listed"): how many
// participants, and our place among them.
func (a *acquisition) listed(sorted []string, own string) {
	if a != nil && a.span != nil {
		a.span.AddEvent("listed", trace.WithAttributes(
			attribute.Int("curator.lock.position", indexOf(sorted, own))))
	}
}

// watching notes that the acquire waits, watching node (span event
// "watching"; "" for a directory's children): the first time, the acquire
// becomes a waiter.
func (a *acquisition) watching(node string) {
	if a == nil {
		return
	}
	if !a.waiting {
		a.waiting = true
		a.t.waiters.Add(context.Background(), 1, a.t.base...)
	}
	if a.span != nil {
		a.span.AddEvent("watching", trace.WithAttributes(attrNode.String(node)))
	}
}

// end records the Acquire's result; h is the hold it returned, if err is
// nil. hooks, if set, get the hold's hand-over count.
func (a *acquisition) end(ctx context.Context, h *Hold, err error, hooks *lockhook.Hooks) {
	t := a.t
	if hooks != nil && err == nil {
		hooks.HandedOver = func(ctx context.Context) { t.handovers.Add(ctx, 1, t.base...) }
	}
	res := resultOf(err)
	t.acquire.Record(ctx, time.Since(a.start).Seconds(), t.acquireOpts[res]...)
	if a.waiting {
		t.waiters.Add(ctx, -1, t.base...)
		if err == nil {
			t.handovers.Add(ctx, 1, t.base...)
		}
	}
	if err == nil && h != nil {
		h.startTelemetry(t)
	}
	if a.span == nil {
		return
	}
	a.span.SetAttributes(attrResult.String(acquireResultNames[res]))
	switch {
	case err == nil && h != nil:
		a.span.AddEvent("held")
		a.span.SetAttributes(attrToken.Int64(h.FencingToken()), attrNode.String(h.Node()))
	case res != wouldBlock:
		a.span.SetStatus(codes.Error, acquireResultNames[res])
		a.span.RecordError(err)
	}
	a.span.End()
}

// holdTelemetry is a hold's: its instruments (nil when the loop did not
// make it, or once its end was recorded) and its start.
type holdTelemetry struct {
	t     *lockInstruments
	start time.Time
}

// startTelemetry makes h a holder in t's metrics, unless it ended already
// (a loss in the instant between the grant and now is not counted).
func (h *Hold) startTelemetry(t *lockInstruments) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.err != nil || h.released {
		return
	}
	h.tel = holdTelemetry{t: t, start: time.Now()}
	t.holders.Add(context.Background(), 1, t.base...)
	t.liveAdd(&h.tel, h.tel.start)
}

// ended records the end of the hold, with h.mu held: by Release (err nil)
// or by end (err ErrLockLost, with the state's name why, or
// framework.ErrClosed).
func (ht *holdTelemetry) ended(err error, why string) {
	t := ht.t
	if t == nil {
		return
	}
	ht.t = nil
	ctx := context.Background()
	e := endReleased
	switch {
	case err == nil:
	case errors.Is(err, framework.ErrClosed):
		e = endClosed
	default:
		e = endLost
		t.losses.Add(ctx, 1, t.lossOpts[reasonOf(why)]...)
	}
	t.holders.Add(ctx, -1, t.base...)
	t.liveRemove(ht)
	t.hold.Record(ctx, time.Since(ht.start).Seconds(), t.holdOpts[e]...)
}

// reasonOf maps the name of the state that ended a hold to a loss reason.
func reasonOf(why string) lossReason {
	switch why {
	case connstate.Suspended.String():
		return reasonSuspended
	case connstate.Lost.String():
		return reasonSessionExpired
	case connstate.ReadOnly.String():
		return reasonReadOnly
	default:
		return reasonConnection
	}
}

// noteLoss counts a loss of a hold that goes on until released: its node
// was deleted under it, or its holder was asked to give it up (revoked).
func (h *Hold) noteLoss(r lossReason) {
	h.mu.Lock()
	t := h.tel.t
	live := h.err == nil
	h.mu.Unlock()
	if live && t != nil {
		t.losses.Add(context.Background(), 1, t.lossOpts[r]...)
	}
}
