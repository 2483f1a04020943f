package framework

import (
	"context"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
)

// go-zookeeper v1.0.4 reads its lastZxid, unsynchronised, while it builds
// the requests that set the session's watches again after a reconnection
// (sendSetWatches), as its receive loop, already running, writes it for
// every reply (go-zookeeper/zk#35, unfixed upstream). A request of ours
// sent the instant the session is back gets a reply inside that window: a
// data race the race detector reports (and a relative zxid from the wrong
// moment). So after a reconnection of a session with watches set, requests
// wait until go-zookeeper has written its setWatches request, which it does
// only after those reads (wireConn sees the frame go out), or at most
// watchResetWait. Whether go-zookeeper has watches to set again is known
// from our own count of the watches we set and saw fire: the count is taken
// before each watch is set, so it never says none while go-zookeeper has
// some.

// watchResetWait bounds the wait for the setWatches request: if the count
// says watches are set but go-zookeeper sends none, requests go on after it.
var watchResetWait = time.Second

type watchKind uint8

const (
	watchData watchKind = iota
	watchExist
	watchChild
)

type watchKey struct {
	path string // the server's path, with chroot and namespace
	kind watchKind
}

// watchCounts counts the watches set on the current connection that have
// not fired, by go-zookeeper's own kinds.
type watchCounts struct {
	mu sync.Mutex
	n  map[watchKey]int
}

func (w *watchCounts) add(path string, k watchKind, d int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.n == nil {
		w.n = map[watchKey]int{}
	}
	key := watchKey{path, k}
	if v := w.n[key] + d; v > 0 {
		w.n[key] = v
	} else {
		delete(w.n, key)
	}
}

// fired forgets the watches an event fires, as go-zookeeper does
// (notifyWatches; and every kind for a path it stops watching).
func (w *watchCounts) fired(ev zk.Event) {
	var kinds []watchKind
	switch ev.Type {
	case zk.EventNodeCreated:
		kinds = []watchKind{watchExist}
	case zk.EventNodeDataChanged:
		kinds = []watchKind{watchExist, watchData}
	case zk.EventNodeChildrenChanged:
		kinds = []watchKind{watchChild}
	case zk.EventNodeDeleted, zk.EventNotWatching:
		kinds = []watchKind{watchExist, watchData, watchChild}
	default:
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, k := range kinds {
		delete(w.n, watchKey{ev.Path, k})
	}
}

func (w *watchCounts) reset() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.n = nil
}

func (w *watchCounts) any() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.n) > 0
}

// sendable holds a request back until it may go out on conn: while
// go-zookeeper is not connected it fails with zk.ErrConnectionClosed (a
// retryable connection loss: a request queued now would be sent the
// instant the session is back, before the watches are set again), and on a
// new connection whose watches go-zookeeper sets again it waits for the
// setWatches request to be written (at most watchResetWait), or ctx.
func (c *Client) sendable(ctx context.Context, conn *zk.Conn) error {
	switch conn.State() {
	case zk.StateHasSession, zk.StateConnectedReadOnly:
	default:
		return zk.ErrConnectionClosed
	}
	c.mu.Lock()
	w := c.h.wire
	c.mu.Unlock()
	gate := w.watchesSet()
	if gate == nil {
		return nil
	}
	select {
	case <-gate:
		return nil
	default:
	}
	t := time.NewTimer(watchResetWait)
	defer t.Stop()
	select {
	case <-gate:
	case <-t.C:
		w.giveUpWatchesSet() // none came: hold no later request
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}

// wants reports whether a one-shot watch of go-zookeeper's waits for ev:
// one of the kinds it fires is counted on its path.
func (w *watchCounts) wants(ev zk.Event) bool {
	var kinds []watchKind
	switch ev.Type {
	case zk.EventNodeCreated:
		kinds = []watchKind{watchExist}
	case zk.EventNodeDataChanged:
		kinds = []watchKind{watchExist, watchData}
	case zk.EventNodeChildrenChanged:
		kinds = []watchKind{watchChild}
	default:
		kinds = []watchKind{watchExist, watchData, watchChild}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, k := range kinds {
		if w.n[watchKey{ev.Path, k}] > 0 {
			return true
		}
	}
	return false
}

// watching reports whether any one-shot watch of go-zookeeper's waits on
// path.
func (w *watchCounts) watching(path string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, k := range []watchKind{watchData, watchExist, watchChild} {
		if w.n[watchKey{path, k}] > 0 {
			return true
		}
	}
	return false
}

// take forgets one watch of kind on path, if one is counted.
func (w *watchCounts) take(path string, k watchKind) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	key := watchKey{path, k}
	switch v := w.n[key]; {
	case v <= 0:
		return false
	case v == 1:
		delete(w.n, key)
	default:
		w.n[key] = v - 1
	}
	return true
}

// count returns how many watches of kind are counted on path.
func (w *watchCounts) count(path string, k watchKind) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.n[watchKey{path, k}]
}
