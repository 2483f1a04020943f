package discovery

import (
	"sync"
	"time"

	"github.com/gocurator/curator/internal/clock"
)

// downInstances is Curator's DownInstanceManager: an instance with
// threshold errors noted within timeout of its first is left out until
// timeout has passed since that first error.
type downInstances struct {
	clock     clock.Clock
	timeout   time.Duration
	threshold int

	mu       sync.Mutex
	statuses map[instanceKey]*downStatus
}

type instanceKey struct{ name, id string }

type downStatus struct {
	since  time.Time
	errors int
}

func newDownInstances(clk clock.Clock, timeout time.Duration, threshold int) *downInstances {
	return &downInstances{clock: clk, timeout: timeout, threshold: threshold, statuses: map[instanceKey]*downStatus{}}
}

// noteError counts one error of inst.
func (d *downInstances) noteError(inst Instance) {
	d.mu.Lock()
	defer d.mu.Unlock()
	now := d.clock.Now()
	d.purge(now)
	k := instanceKey{inst.Name, inst.ID}
	st := d.statuses[k]
	if st == nil {
		st = &downStatus{since: now}
		d.statuses[k] = st
	}
	st.errors++
}

// filter returns the instances that are not down, reusing buf.
func (d *downInstances) filter(instances []Instance, buf []Instance) []Instance {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.statuses) > 0 {
		d.purge(d.clock.Now())
	}
	if len(d.statuses) == 0 {
		return append(buf, instances...)
	}
	for _, inst := range instances {
		if st := d.statuses[instanceKey{inst.Name, inst.ID}]; st == nil || st.errors < d.threshold {
			buf = append(buf, inst)
		}
	}
	return buf
}

func (d *downInstances) purge(now time.Time) {
	for k, st := range d.statuses {
		if now.Sub(st.since) >= d.timeout {
			delete(d.statuses, k)
		}
	}
}
