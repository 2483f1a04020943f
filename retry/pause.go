package retry

import (
	"context"
	"time"
)

// Pause is the pause between the attempts of work that keeps trying until
// it succeeds or its context ends (a guaranteed delete in the background, a
// watch set again): Base before the first retry, twice as long before each
// next one, never longer than Max. The zero Max means no cap. A Pause is
// not safe for concurrent use; give each loop its own.
type Pause struct {
	Base, Max time.Duration
	next      time.Duration
}

// Next returns the pause before the next attempt and doubles the one after.
func (p *Pause) Next() time.Duration {
	if p.next == 0 {
		p.next = p.Base
	}
	d := p.next
	p.next = saturatingMul(p.next, 2)
	if p.Max > 0 {
		p.next = min(p.next, p.Max)
		d = min(d, p.Max)
	}
	return d
}

// Wait sleeps for Next, or until ctx ends, and then returns ctx's error.
func (p *Pause) Wait(ctx context.Context) error { return sleepCtx(ctx, p.Next()) }
