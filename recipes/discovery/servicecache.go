package discovery

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"go.uber.org/zap"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/cache"
)

// ServiceCache keeps the instances of one service in memory, current with
// ZooKeeper, and says when they change: Curator's ServiceCache, on
// recipes/cache (one persistent recursive watch of the service's node,
// PathChildrenCache's view). It is safe for concurrent use; Instances
// does no I/O.
type ServiceCache struct {
	d     *Discovery
	name  string
	dir   string
	cache *cache.Cache

	mu        sync.Mutex
	state     cacheState
	instances map[string]Instance // by node name
	ids       []string            // instances' node names, sorted
	// snapshot is the instances sorted by node name, made on demand
	// (Instances) from instances: nil once they changed since it was
	// made. An event costs the one instance it names, not the service:
	// a list remade per event made loading n instances cost n² (about
	// 200 s of CPU for 10,000 with a JSON comparison of both lists).
	snapshot atomic.Pointer[[]Instance]
	builds   atomic.Int64 // snapshots made (tests: made on demand, not per event)
	// listing is the size of the service's getChildren reply as the
	// instances stand (4 + 4 + len(name) per instance); overMax says it
	// was last reported past jute.maxbuffer (warnListingLocked).
	listing   int
	overMax   bool
	listeners latestListeners
	stopCache func()      // the listener on cache, set once started
	closed    atomic.Bool // Close was called: checked without s.mu by picks
}

// cacheState is where a ServiceCache is in its life. Start and Close
// decide under s.mu, so a failed Start undoes only what it did itself and
// never what a running Start did (a second Start once un-tracked the
// first, and Discovery.Close then left its watch running).
type cacheState int

const (
	cacheIdle     cacheState = iota // new, or a failed Start: may Start
	cacheStarting                   // a Start is loading
	cacheStarted                    // loaded and following
	cacheClosed                     // closed: final
)

// Cache returns a cache of service name's instances. It does no I/O: Start
// loads it. The Discovery's Close closes it.
func (d *Discovery) Cache(name string) *ServiceCache {
	s := &ServiceCache{d: d, name: name, instances: map[string]Instance{}}
	s.snapshot.Store(&[]Instance{})
	if d != nil {
		s.dir = d.servicePath(name)
		s.cache = cache.New(d.c, s.dir, cache.WithMaxDepth(1))
	}
	return s
}

// Start loads the service's instances and returns once they are cached
// (a service with no instance yet, or no node yet, is an empty cache that
// fills as instances register: CURATOR-705); from then on the cache
// follows every change, across reconnections and session loss, and an
// operator deleting the service's node and registering again is followed
// too (CURATOR-163). A malformed instance node is skipped and reported,
// as Discovery.Instances does. While the server cannot be reached Start
// keeps trying until ctx ends.
//
// A second Start while one runs or has succeeded returns
// ErrAlreadyStarted and leaves the running cache as it is; Start after
// Close (the cache's or the Discovery's) returns ErrClosed; a nil
// *ServiceCache, or one of a nil *Discovery, returns ErrNilHandle. On
// failure (those, ctx's error, ErrInvalidInstance for a bad name) nothing
// is left running and no watch is left on the server; a Start that failed
// may be called again.
func (s *ServiceCache) Start(ctx context.Context) error {
	if s == nil || s.d == nil {
		return ErrNilHandle
	}
	if err := s.d.check(); err != nil {
		return err
	}
	if err := segment(s.name); err != nil {
		return fmt.Errorf("%w: service name: %v", ErrInvalidInstance, err)
	}
	s.mu.Lock()
	switch s.state {
	case cacheStarting, cacheStarted:
		s.mu.Unlock()
		return fmt.Errorf("discovery: cache of %s: %w", s.name, ErrAlreadyStarted)
	case cacheClosed:
		s.mu.Unlock()
		return ErrClosed
	}
	s.state = cacheStarting
	s.mu.Unlock()
	// From here this Start owns the tracking and the listener: only it
	// undoes them.
	if !s.d.track(s, s.Close) {
		s.setIdle()
		return ErrClosed
	}
	stop := s.cache.Listen(s.apply)
	if err := s.cache.Start(ctx); err != nil {
		stop()
		s.setIdle()
		s.d.untrack(s)
		if errors.Is(err, cache.ErrClosed) || s.closed.Load() {
			return ErrClosed
		}
		return fmt.Errorf("discovery: cache of %s: %w", s.name, err)
	}
	s.mu.Lock()
	if s.state == cacheClosed {
		// Closed while the load finished: Close found no listener to stop.
		s.mu.Unlock()
		stop()
		return ErrClosed
	}
	s.state, s.stopCache = cacheStarted, stop
	// The listener may lag the load: take what the load found now, so
	// that Instances is complete when Start returns.
	changed := false
	for _, id := range s.cache.Children(s.dir) {
		if n, ok := s.cache.Get(framework.JoinPath(s.dir, id)); ok {
			changed = s.put(id, n) || changed
		}
	}
	if changed {
		s.changedLocked()
	}
	s.mu.Unlock()
	return nil
}

// setIdle lets a failed Start be tried again, unless Close came first.
func (s *ServiceCache) setIdle() {
	s.mu.Lock()
	if s.state == cacheStarting {
		s.state = cacheIdle
	}
	s.mu.Unlock()
}

// isClosed reports whether the cache, or its Discovery, is closed.
func (s *ServiceCache) isClosed() bool {
	return s.closed.Load() || s.d.done.Load()
}

// apply follows one event of the underlying cache.
func (s *ServiceCache) apply(e cache.Event) {
	parent, id := framework.SplitPath(e.Path)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state == cacheClosed {
		return
	}
	changed := false
	switch e.Type {
	case cache.Created, cache.Changed:
		if parent == s.dir {
			changed = s.put(id, e.Node)
		}
	case cache.Deleted:
		switch {
		case e.Path == s.dir:
			changed = len(s.instances) > 0
			clear(s.instances)
			s.ids = s.ids[:0]
			s.listing = 0
		case parent == s.dir:
			_, changed = s.instances[id]
			s.remove(id)
		}
	case cache.Initialized, cache.Resynced:
		// Every change came as its own event already.
	}
	if changed {
		s.changedLocked()
	}
}

// put decodes a cached instance node and reports whether the instances
// changed; s.mu is held.
func (s *ServiceCache) put(id string, n cache.Node) bool {
	old, had := s.instances[id]
	inst, err := Decode(n.Data)
	if err != nil {
		s.remove(id)
		s.d.malformed(n.Path, err)
		return had
	}
	if !had {
		s.listing += 4 + len(id)
		i, _ := slices.BinarySearch(s.ids, id)
		s.ids = slices.Insert(s.ids, i, id)
	}
	s.instances[id] = inst
	return !had || !sameInstance(old, inst)
}

// remove forgets instance id; s.mu is held.
func (s *ServiceCache) remove(id string) {
	if _, had := s.instances[id]; had {
		delete(s.instances, id)
		s.listing -= 4 + len(id)
		if i, ok := slices.BinarySearch(s.ids, id); ok {
			s.ids = slices.Delete(s.ids, i, i+1)
		}
	}
}

// changedLocked drops the snapshot and tells the listeners, each of which
// gets the list as it is when it takes it; s.mu is held.
func (s *ServiceCache) changedLocked() {
	s.snapshot.Store(nil)
	s.listeners.publishFunc(s.current)
	s.warnListingLocked()
}

// warnListingLocked logs, once each time it happens, the service's
// listing passing the client's jute.maxbuffer (about 26,000 instances of
// UUID ids at the default 1 MiB). Go reads such a listing; a Java client
// with the same limit cannot ("Packet len ... is out of range"), so
// Curator's ServiceCache, Dubbo or Spring Cloud on the same registry fail
// to list the service until their -Djute.maxbuffer is raised. s.mu is
// held.
func (s *ServiceCache) warnListingLocked() {
	size, limit := 4+s.listing, s.d.c.JuteMaxBuffer()
	switch over := size > limit; {
	case over && !s.overMax:
		s.d.log.Warn("service listing past jute.maxbuffer: Java clients with that limit cannot list it",
			zap.String("service", s.name), zap.Int("instances", len(s.instances)),
			zap.Int("listing_bytes", size), zap.Int("jute_maxbuffer", limit))
		s.overMax = true
	case !over:
		s.overMax = false
	}
}

// current returns the instances sorted by node name, making the snapshot
// if they changed since the last one.
func (s *ServiceCache) current() []Instance {
	if p := s.snapshot.Load(); p != nil {
		return *p
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if p := s.snapshot.Load(); p != nil {
		return *p
	}
	s.builds.Add(1)
	list := make([]Instance, len(s.ids))
	for k, id := range s.ids {
		list[k] = s.instances[id]
	}
	s.snapshot.Store(&list)
	return list
}

// sameInstance reports whether a and b are the same registration, as
// their JSON says.
func sameInstance(a, b Instance) bool {
	x, _ := a.MarshalJSON()
	y, _ := b.MarshalJSON()
	return string(x) == string(y)
}

// Instances returns the cached instances, sorted by node name: a snapshot
// the caller must not modify. It does no I/O. Before Start it is empty;
// after Close (the cache's or its Discovery's) it is nil: a closed cache
// no longer follows the service, and the Discovery's Close has just
// unregistered its own instances, so nothing it held is offered.
func (s *ServiceCache) Instances() []Instance {
	if s == nil || s.d == nil || s.isClosed() {
		return nil
	}
	return s.current()
}

// Listen registers fn for the changes of the cached instances from now on
// (Curator's ServiceCacheListener.cacheChanged), with the new list, on a
// goroutine of the listener's own: a slow or blocked fn holds up neither
// the cache nor the other listeners. The lists come in the order they
// were made, and fn always gets the latest: while fn runs, a newer list
// replaces the one waiting for it, so a listener that is behind skips the
// lists in between (each holds the whole service) and waiting costs at
// most one list, however many changes pass. cancel unregisters fn and
// never blocks; it may be called from fn. On a closed or nil
// *ServiceCache, or with a nil fn, Listen registers nothing and returns a
// no-op cancel.
func (s *ServiceCache) Listen(fn func([]Instance)) (cancel func()) {
	if s == nil {
		return func() {}
	}
	return s.listeners.add(fn)
}

// Close stops following changes and removes the cache's watch from the
// server; Instances is nil from then on, lists not yet delivered are
// dropped, and each listener's goroutine ends at once, or when its
// running fn returns (Close does not wait for it). A Start in progress
// returns ErrClosed. It does not block on the server; it is idempotent,
// and a no-op on a nil *ServiceCache. The error is the underlying
// cache's.
func (s *ServiceCache) Close() error {
	if s == nil || s.closed.Swap(true) {
		return nil
	}
	s.mu.Lock()
	s.state = cacheClosed
	stop := s.stopCache
	s.stopCache = nil
	s.mu.Unlock()
	if s.d != nil {
		s.d.untrack(s)
	}
	var err error
	if s.cache != nil {
		err = s.cache.Close()
	}
	if stop != nil {
		stop()
	}
	s.listeners.close()
	return err
}

// Provider returns a provider of service name's instances over a cache of
// its own (Curator's serviceProviderBuilder): Start it to load the cache.
// The Discovery's Close closes it.
func (d *Discovery) Provider(name string, opts ...ProviderOption) *Provider {
	o := defaultProviderOptions()
	for _, opt := range opts {
		opt(&o)
	}
	c := d.Cache(name)
	p := newProvider(c, o)
	p.cache = c
	return p
}
