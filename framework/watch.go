package framework

import (
	"reflect"
	"sync"

	"github.com/go-zookeeper/zk"
)

// With a chroot or namespace, the path of every watch event must be
// stripped of the prefix before the caller sees it. A goroutine per watch
// would do, but it lives until the watch fires: a watch its caller
// abandoned (the predecessor of a timed-out acquire) would hold one for as
// long as the node is left alone. Instead, pump goroutines of the client
// wait on all pending watches at once with reflect.Select, and forward
// exactly one event per watch: the change, or EventNotWatching when the
// session ends (go-zookeeper's) or the client closes (the pump's own, for a
// watch still pending then).

// watchPumpCap is how many watches one pump waits on. reflect.Select takes
// at most 65536 cases, and each select costs in proportion to its cases,
// so past this many pending watches another pump starts.
const watchPumpCap = 1024

// watchPumps is the client's set of pumps, guarded by c.mu.
type watchPumps struct {
	pumps []*watchPump
}

// watchPump forwards the events of up to watchPumpCap watches.
type watchPump struct {
	wake chan struct{} // a watch was added; buffered, never blocks

	mu    sync.Mutex
	added []pendingWatch // not yet picked up by the pump
	n     int            // watches owned: added and pending
}

// pendingWatch is a watch whose event has not been forwarded yet.
type pendingWatch struct {
	in   <-chan zk.Event // go-zookeeper's: one event, then closed
	out  chan zk.Event   // the caller's: buffered for the one event
	path string          // the caller's path, for EventNotWatching at Close
	// view is the client (or namespace view) that set the watch: pumps
	// are shared by a client and its views, each strips its own prefix.
	view *Client
}

// watch returns the channel the caller gets for in, a go-zookeeper watch
// channel of the caller's path: with a chroot or namespace, one that the
// client's pumps feed with the event, its path stripped. Every watch
// channel gets exactly one event: the change, or an EventNotWatching when
// the session ends or the client closes; then it is closed.
func (c *Client) watch(in <-chan zk.Event, path string) <-chan zk.Event {
	if c.prefix == "" || in == nil {
		return in
	}
	w := pendingWatch{in: in, out: make(chan zk.Event, 1), path: path, view: c}
	c.mu.Lock()
	if c.closed {
		// The pumps are ending, or have ended, without this watch.
		c.mu.Unlock()
		c.finishWatch(w)
		return w.out
	}
	p := c.pumpWithRoomLocked()
	p.mu.Lock()
	p.added = append(p.added, w)
	p.n++
	p.mu.Unlock()
	c.mu.Unlock()
	select {
	case p.wake <- struct{}{}:
	default: // a wake-up is pending already
	}
	return w.out
}

// pumpWithRoomLocked returns a pump that can take one more watch, starting
// one if none can. Called with c.mu held and the client not closed, so the
// pump is counted in c.wg before Close waits on it.
func (c *Client) pumpWithRoomLocked() *watchPump {
	for _, p := range c.watches.pumps {
		p.mu.Lock()
		room := p.n < watchPumpCap
		p.mu.Unlock()
		if room {
			return p
		}
	}
	p := &watchPump{wake: make(chan struct{}, 1)}
	c.watches.pumps = append(c.watches.pumps, p)
	c.wg.Add(1)
	go c.runPump(p)
	return p
}

// runPump forwards the events of p's watches until the client closes, and
// then ends every watch still pending with EventNotWatching.
func (c *Client) runPump(p *watchPump) {
	defer c.wg.Done()
	// cases[0] is the wake-up, cases[1] the client's end, cases[2+i] the
	// channel of pending[i].
	cases := []reflect.SelectCase{
		{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(p.wake)},
		{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(c.ctx.Done())},
	}
	var pending []pendingWatch
	for {
		i, v, ok := reflect.Select(cases)
		switch i {
		case 0:
			p.mu.Lock()
			added := p.added
			p.added = nil
			p.mu.Unlock()
			for _, w := range added {
				pending = append(pending, w)
				cases = append(cases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(w.in)})
			}
		case 1:
			// Close set c.closed before it cancelled c.ctx, so no watch
			// is added after this.
			p.mu.Lock()
			pending = append(pending, p.added...)
			p.added = nil
			p.n = 0
			p.mu.Unlock()
			for _, w := range pending {
				c.finishWatch(w)
			}
			return
		default:
			k := i - 2
			w := pending[k]
			var ev zk.Event
			if ok {
				ev = v.Interface().(zk.Event)
				ev.Path = w.view.strip(ev.Path)
			} else {
				ev = notWatching(w.path, zk.ErrClosing)
			}
			w.out <- ev
			close(w.out)
			// Remove it: the last pending watch takes its place.
			last := len(pending) - 1
			pending[k] = pending[last]
			pending[last] = pendingWatch{}
			pending = pending[:last]
			cases[i] = cases[last+2]
			cases[last+2] = reflect.SelectCase{}
			cases = cases[:last+2]
			p.mu.Lock()
			p.n--
			p.mu.Unlock()
		}
	}
}

// finishWatch ends w when the client closes: with its event if it has
// fired already, else with EventNotWatching, as go-zookeeper ends a watch
// of a closed connection.
func (c *Client) finishWatch(w pendingWatch) {
	var ev zk.Event
	select {
	case e, ok := <-w.in:
		if ok {
			e.Path = w.view.strip(e.Path)
			ev = e
		} else {
			ev = notWatching(w.path, zk.ErrClosing)
		}
	default:
		ev = notWatching(w.path, zk.ErrClosing)
	}
	w.out <- ev
	close(w.out)
}

func notWatching(path string, err error) zk.Event {
	return zk.Event{Type: zk.EventNotWatching, State: zk.StateDisconnected, Path: path, Err: err}
}
