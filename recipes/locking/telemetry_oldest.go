package locking

import (
	"context"
	"reflect"
	"sync"
	"time"

	"go.opentelemetry.io/otel/metric"

	"github.com/gocurator/curator/internal/telemetry"
)

// oldestHolds is the curator.lock.hold.oldest gauge of one meter provider:
// the age of the oldest live hold of each lock of the process, the measure
// a "held too long" alert needs (the hold duration histogram only learns
// of a hold when it ends). One callback per provider serves every lock, so
// nothing has to be unregistered when a recipe handle is dropped.
type oldestHolds struct {
	gauge metric.Float64ObservableGauge
	mu    sync.Mutex
	locks map[*lockInstruments]struct{} // those with live holds, or that had
}

// oldestByProvider maps a metric.MeterProvider to its *oldestHolds.
var oldestByProvider sync.Map

// oldestFor returns the gauge of mp, registered on first use; nil if mp
// cannot key a map (a provider of a type that is not comparable) or gives
// no gauge.
func oldestFor(mp metric.MeterProvider) *oldestHolds {
	if mp == nil || !reflect.TypeOf(mp).Comparable() {
		return nil
	}
	if o, ok := oldestByProvider.Load(mp); ok {
		return o.(*oldestHolds)
	}
	m := mp.Meter(ScopeName, metric.WithInstrumentationVersion(telemetry.Version()))
	g, err := m.Float64ObservableGauge("curator.lock.hold.oldest", metric.WithUnit("s"),
		metric.WithDescription("Age of the oldest hold of this process on a lock; no series while none is held."))
	if err != nil && g == nil {
		return nil
	}
	o := &oldestHolds{gauge: g, locks: make(map[*lockInstruments]struct{})}
	if prev, loaded := oldestByProvider.LoadOrStore(mp, o); loaded {
		return prev.(*oldestHolds)
	}
	if _, err := m.RegisterCallback(o.observe, g); err != nil {
		return nil
	}
	return o
}

// observe reports, for each lock with live holds, the oldest one's age,
// and forgets the locks without any.
func (o *oldestHolds) observe(_ context.Context, obs metric.Observer) error {
	now := time.Now()
	o.mu.Lock()
	defer o.mu.Unlock()
	for t := range o.locks {
		t.liveMu.Lock()
		var first time.Time
		for _, start := range t.live {
			if first.IsZero() || start.Before(first) {
				first = start
			}
		}
		if len(t.live) == 0 {
			delete(o.locks, t)
		}
		t.liveMu.Unlock()
		if !first.IsZero() {
			obs.ObserveFloat64(o.gauge, now.Sub(first).Seconds(), t.observeOpts...)
		}
	}
	return nil
}

// liveAdd notes a hold that started at start. A lock whose first live hold
// this is joins the gauge's locks (after t.liveMu is released: observe
// takes o.mu, then t.liveMu).
func (t *lockInstruments) liveAdd(h *holdTelemetry, start time.Time) {
	if t.oldest == nil {
		return
	}
	t.liveMu.Lock()
	if t.live == nil {
		t.live = make(map[*holdTelemetry]time.Time)
	}
	t.live[h] = start
	first := len(t.live) == 1
	t.liveMu.Unlock()
	if first {
		t.oldest.mu.Lock()
		t.oldest.locks[t] = struct{}{}
		t.oldest.mu.Unlock()
	}
}

// liveRemove forgets an ended hold; observe drops a lock left without any.
func (t *lockInstruments) liveRemove(h *holdTelemetry) {
	if t.oldest == nil {
		return
	}
	t.liveMu.Lock()
	delete(t.live, h)
	t.liveMu.Unlock()
}
