package discovery

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gocurator/curator/internal/clock"
)

// startCloser is the cache a provider owns.
type startCloser interface {
	Start(ctx context.Context) error
	Close() error
}

// InstanceSource is what a Provider picks from: a ServiceCache, or any
// other list of instances. Instances must be safe for concurrent use and
// must not be changed by the caller.
type InstanceSource interface {
	Instances() []Instance
}

// Provider picks an instance of one service for each use, as Curator's
// ServiceProvider: from a source's instances (a ServiceCache), leaving
// out disabled ones, those a filter refuses and those recently noted down
// (NoteError), with a Strategy (round robin by default). It is safe for
// concurrent use; a pick does no I/O.
type Provider struct {
	src      InstanceSource
	cache    startCloser   // owned: started and closed with the provider
	sc       *ServiceCache // src when it is a ServiceCache: its Close closes the provider
	strategy Strategy
	filters  []func(Instance) bool
	down     *downInstances
	pool     sync.Pool
	closed   atomic.Bool
}

// ProviderOption configures a Provider.
type ProviderOption func(*providerOptions)

type providerOptions struct {
	// strategy picks among the available instances. Default RoundRobin.
	strategy Strategy
	// filters must all accept an instance for it to be picked. Default none
	// (disabled and down instances are always left out).
	filters []func(Instance) bool
	// downTimeout and downThreshold are Curator's DownInstancePolicy:
	// an instance with downThreshold errors noted is left out until
	// downTimeout after its first. Defaults 30s and 2, Curator's.
	downTimeout   time.Duration
	downThreshold int
	// clock times the down-instance policy. Default the wall clock.
	clock clock.Clock
}

func defaultProviderOptions() providerOptions {
	return providerOptions{downTimeout: 30 * time.Second, downThreshold: 2, clock: clock.Real}
}

// WithStrategy sets how an instance is picked (default RoundRobin()).
func WithStrategy(s Strategy) ProviderOption {
	return func(o *providerOptions) {
		if s != nil {
			o.strategy = s
		}
	}
}

// WithFilter adds a filter: an instance is offered only if every filter
// returns true for it (Curator's additionalFilter). Filters run on every
// pick and must be quick and safe for concurrent use.
func WithFilter(f func(Instance) bool) ProviderOption {
	return func(o *providerOptions) {
		if f != nil {
			o.filters = append(o.filters, f)
		}
	}
}

// WithDownInstancePolicy sets Curator's DownInstancePolicy: an instance
// for which NoteError was called errorThreshold times is not offered
// until timeout has passed since the first of those errors (defaults 30s
// and 2). A threshold below 1 is taken as 1, a timeout of zero or less
// disables the policy.
func WithDownInstancePolicy(timeout time.Duration, errorThreshold int) ProviderOption {
	return func(o *providerOptions) {
		o.downTimeout, o.downThreshold = timeout, max(errorThreshold, 1)
	}
}

// NewProvider returns a provider picking from src's instances. It does no
// I/O and needs no Start; Discovery.Provider makes one over a cache of its
// own. When src is a *ServiceCache, the provider is closed with it (and
// with its Discovery): picks return ErrClosed. A nil src (or a nil
// *ServiceCache) makes a provider whose picks return ErrNilSource.
func NewProvider(src InstanceSource, opts ...ProviderOption) *Provider {
	o := defaultProviderOptions()
	for _, opt := range opts {
		opt(&o)
	}
	return newProvider(src, o)
}

func newProvider(src InstanceSource, o providerOptions) *Provider {
	if o.strategy == nil {
		o.strategy = RoundRobin()
	}
	p := &Provider{src: src, strategy: o.strategy, filters: o.filters}
	if sc, ok := src.(*ServiceCache); ok {
		if sc == nil {
			// A typed nil would pass the src == nil check and offer
			// nothing, silently.
			p.src = nil
		} else {
			p.sc = sc
		}
	}
	if o.downTimeout > 0 {
		p.down = newDownInstances(o.clock, o.downTimeout, o.downThreshold)
	}
	return p
}

// Start starts the provider's own cache (Discovery.Provider) and returns
// once it has loaded the service's instances; ctx bounds the load, and
// while the server cannot be reached Start keeps trying until ctx ends.
// On failure nothing is left running and Start may be called again. A
// second Start of a started provider returns ErrAlreadyStarted (the
// running cache is not touched); Start after Close, the cache's Close or
// the Discovery's, returns ErrClosed; a nil *Provider returns
// ErrNilHandle. A provider from NewProvider needs no Start: its Start
// does nothing and returns nil (ErrClosed once closed).
func (p *Provider) Start(ctx context.Context) error {
	if p == nil {
		return ErrNilHandle
	}
	if p.closedNow() {
		return ErrClosed
	}
	if p.cache == nil {
		return nil
	}
	return p.cache.Start(ctx)
}

// closedNow reports whether the provider, or the cache it picks from, is
// closed.
func (p *Provider) closedNow() bool {
	return p.closed.Load() || (p.sc != nil && p.sc.d != nil && p.sc.isClosed())
}

// usable returns why the provider cannot pick, nil if it can.
func (p *Provider) usable() error {
	switch {
	case p == nil:
		return ErrNilHandle
	case p.src == nil:
		return ErrNilSource
	case p.sc != nil && p.sc.d == nil:
		return ErrNilHandle // a provider of a nil *Discovery
	case p.closedNow():
		return ErrClosed
	}
	return nil
}

// Instance picks an instance for one use (do not keep it: pick again for
// the next call, so that changes and NoteError take effect). It does no
// I/O and never blocks on the server. It returns ErrNoInstances when none
// is available (as before the provider's Start has loaded its cache),
// ErrClosed after Close of the provider, of its cache or of its
// Discovery, ErrNilSource for a provider of a nil source and ErrNilHandle
// for a nil *Provider.
func (p *Provider) Instance() (Instance, error) {
	if err := p.usable(); err != nil {
		return Instance{}, err
	}
	bufp, _ := p.pool.Get().(*[]Instance)
	if bufp == nil {
		bufp = new([]Instance)
	}
	avail := p.available((*bufp)[:0])
	defer func() {
		clear(avail)
		*bufp = avail[:0]
		p.pool.Put(bufp)
	}()
	if len(avail) == 0 {
		return Instance{}, ErrNoInstances
	}
	return p.strategy.Pick(avail), nil
}

// Instances returns every instance the provider would pick from now:
// enabled, accepted by the filters, not down (Curator's getAllInstances).
// It is nil where Instance would return an error other than
// ErrNoInstances (a closed provider, a nil source or handle).
func (p *Provider) Instances() []Instance {
	if p.usable() != nil {
		return nil
	}
	return p.available(nil)
}

func (p *Provider) available(buf []Instance) []Instance {
	all := p.src.Instances()
	if p.down != nil {
		all = p.down.filter(all, buf)
	} else {
		all = append(buf, all...)
	}
	out := all[:0]
next:
	for _, inst := range all {
		if !inst.IsEnabled() {
			continue
		}
		for _, f := range p.filters {
			if !f(inst) {
				continue next
			}
		}
		out = append(out, inst)
	}
	return out
}

// NoteError records that a call to inst failed: after the down-instance
// policy's threshold of errors the instance is not offered for its
// timeout (WithDownInstancePolicy).
func (p *Provider) NoteError(inst Instance) {
	if p == nil || p.down == nil {
		return
	}
	p.down.noteError(inst)
}

// Close stops the provider's own cache, removing its watch from the
// server; later picks return ErrClosed and Start returns ErrClosed. It
// does not block on the server; it is idempotent, and a no-op on a nil
// *Provider. A provider from NewProvider leaves its source open.
func (p *Provider) Close() error {
	if p == nil {
		return nil
	}
	if p.closed.Swap(true) || p.cache == nil {
		return nil
	}
	if err := p.cache.Close(); err != nil {
		return fmt.Errorf("provider: %w", err)
	}
	return nil
}
