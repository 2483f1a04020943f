package cache

import (
	"context"
	"errors"
	"sort"

	"github.com/go-zookeeper/zk"
	"go.uber.org/zap"
)

// The event loop reads a changed node without waiting for the reply, up
// to readsInFlight at once, and takes the next event meanwhile, so that
// changes are taken in at the rate the server answers rather than one
// round trip each. Two rules keep it from applying a read older than one
// already applied (a node deleted, then brought back by a stale read,
// with no event left to correct it):
//
//   - one read per path at a time: the loop waits for a path's read
//     before it starts another of the same path (meanwhile the Watcher
//     coalesces that path's events);
//   - reads of several paths (a new node's subtree, a resync, Synced's
//     settling) run alone: they take readMu exclusively, which waits for
//     the background reads to finish and holds new ones back. A
//     background read that finds a new node (or a new incarnation) does
//     not load it: it leaves the path in reloads for such a read.
//
// ZooKeeper answers one session's requests in order, and every change is
// followed by an event whose read is issued after it, so each path's
// last read reflects its last change: the cache converges as it did with
// one read at a time.

// dispatch starts a background read of p, a cached node, once p's
// previous read is done and a slot is free.
func (c *Cache) dispatch(p string) {
	c.flight.Lock()
	done := c.inflight[p]
	c.flight.Unlock()
	if done != nil {
		<-done
	}
	select {
	case c.slots <- struct{}{}:
	case <-c.life.Done():
		return
	}
	c.readMu.RLock()
	done = make(chan struct{})
	c.flight.Lock()
	c.inflight[p] = done
	c.flight.Unlock()
	go c.reread(p, done)
}

// reread reads p again and applies what it finds, with readMu held
// shared (by dispatch) and released here. A new node is left for
// settleLocked.
func (c *Cache) reread(p string, done chan struct{}) {
	defer func() {
		c.flight.Lock()
		delete(c.inflight, p)
		c.flight.Unlock()
		close(done)
		c.readMu.RUnlock()
		<-c.slots
	}()
	r, err := c.readNode(c.life, c.c, p)
	if errors.Is(err, zk.ErrNoAuth) {
		c.unreadable(p, err)
		return
	}
	if err != nil {
		if c.life.Err() == nil {
			// A connection problem: the reconnection's resync reads it again.
			c.log.Debug("read after event failed", zap.String("event", p), zap.Error(err))
		}
		return
	}
	c.mu.RLock()
	known := c.knownLocked(p, r)
	c.mu.RUnlock()
	if known || r.stat == nil {
		c.apply(p, r)
		return
	}
	c.flight.Lock()
	c.reloads[p] = struct{}{}
	c.flight.Unlock()
	select {
	case c.reload <- struct{}{}:
	default:
	}
}

// takeReloads empties reloads and returns its paths, parents first.
func (c *Cache) takeReloads() []string {
	c.flight.Lock()
	defer c.flight.Unlock()
	if len(c.reloads) == 0 {
		return nil
	}
	ps := make([]string, 0, len(c.reloads))
	for p := range c.reloads {
		ps = append(ps, p)
	}
	c.reloads = map[string]struct{}{}
	sort.Strings(ps)
	return ps
}

// settleLocked reads the paths left in reloads; readMu is held alone.
// If ctx ends first, what is left stays for the event loop.
func (c *Cache) settleLocked(ctx context.Context) error {
	ps := c.takeReloads()
	for i, p := range ps {
		err := c.refresh(ctx, p)
		if err == nil || c.life.Err() != nil {
			continue
		}
		if ctx.Err() != nil {
			c.flight.Lock()
			for _, q := range ps[i:] {
				c.reloads[q] = struct{}{}
			}
			c.flight.Unlock()
			select {
			case c.reload <- struct{}{}:
			default:
			}
			return ctx.Err()
		}
		// A connection problem: the reconnection's resync reads it again.
		c.log.Debug("read after event failed", zap.String("event", p), zap.Error(err))
	}
	return nil
}

// settle waits for the background reads and makes the reads they left,
// for Synced: after it, the cache has handled every event received
// before it was called.
func (c *Cache) settle(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(c.life, cancel)()
	if err := c.lockReads(ctx); err != nil {
		return err
	}
	defer c.readMu.Unlock()
	return c.settleLocked(ctx)
}

// lockReads takes readMu alone, or returns ctx's error if ctx ends first
// (the lock, once taken, is then given back at once).
func (c *Cache) lockReads(ctx context.Context) error {
	got := make(chan struct{})
	go func() {
		c.readMu.Lock()
		close(got)
	}()
	select {
	case <-got:
		return nil
	case <-ctx.Done():
		go func() {
			<-got
			c.readMu.Unlock()
		}()
		return ctx.Err()
	}
}

// drain waits for the background reads to end.
func (c *Cache) drain() {
	c.readMu.Lock()
	//lint:ignore SA2001 an empty critical section: waiting is the point
	c.readMu.Unlock()
}
