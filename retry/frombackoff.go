package retry

import (
	"sync"
	"time"

	"github.com/cenkalti/backoff/v4"
)

// fromBackOff adapts a backoff.BackOff factory. The value FromBackOff
// returns is a template: Do and ToBackOff call start for an instance with a
// BackOff of its own.
type fromBackOff struct {
	newBackOff func() backoff.BackOff

	mu      sync.Mutex
	cur     backoff.BackOff // the BackOff in use; nil until first needed
	perCall bool            // cur belongs to one call and is never replaced
}

// FromBackOff returns a Policy driven by BackOffs from newBackOff. Each [Do]
// call (and each [ToBackOff] run) gets a fresh BackOff from newBackOff,
// Reset before use; every retry decision calls its NextBackOff once, and
// backoff.Stop (or any negative duration) means no retry. The BackOff keeps
// its own count and clock, so retryCount and elapsed are not consulted.
//
// Asked through AllowRetry directly, outside Do, the policy keeps one
// BackOff for all callers and takes a fresh one whenever retryCount is 0.
//
// A nil newBackOff, or one that returns nil, gives a policy that [Do]
// rejects with [ErrInvalidPolicy]. newBackOff and NextBackOff must not block.
func FromBackOff(newBackOff func() backoff.BackOff) Policy {
	if newBackOff == nil {
		return invalidf("FromBackOff: nil factory")
	}
	return &fromBackOff{newBackOff: newBackOff}
}

func (p *fromBackOff) start() Policy {
	b := p.newBackOff()
	if b == nil {
		return invalidf("FromBackOff: factory returned a nil BackOff")
	}
	b.Reset()
	return &fromBackOff{newBackOff: p.newBackOff, cur: b, perCall: true}
}

// AllowRetry returns the next duration of the BackOff, refusing on backoff.Stop.
func (p *fromBackOff) AllowRetry(retryCount int, _ time.Duration) (time.Duration, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.perCall && (p.cur == nil || retryCount == 0) {
		b := p.newBackOff()
		if b == nil {
			return 0, false
		}
		b.Reset()
		p.cur = b
	}
	d := p.cur.NextBackOff()
	if d < 0 {
		return 0, false
	}
	return d, true
}
