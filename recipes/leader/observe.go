package leader

import (
	"context"
	"errors"
	"time"

	"github.com/go-zookeeper/zk"
	"go.uber.org/zap"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/retry"
)

// Event is a change of leader seen by Observe.
type Event struct {
	// Leader is the new leader (IsLeader true), or the zero Participant
	// when nobody leads.
	Leader Participant
	// Node is the path of the leader's node, "" when nobody leads.
	Node string
	// Token is the czxid of the leader's node (its Term's Token), 0 when
	// nobody leads.
	Token int64
}

// NoLeader reports whether the event says that nobody leads.
func (ev Event) NoLeader() bool { return ev.Node == "" }

// Observe returns a channel of leader changes: first the leader at the
// time of the call (or "no leader", see Event.NoLeader), then every change
// it sees, "no leader" included, in order. Events are never dropped: a
// slow reader gets every one, from an unbounded queue. The channel is
// closed when ctx ends or the client closes. It costs a goroutine and one
// watch on the election's directory (framework.Watch: one persistent
// watch, whether the directory exists or not), taken off the server when
// it ends. Each change of the directory, and each reconnection (changes
// made while disconnected were not seen), makes it look again; a leader
// that comes and goes between two looks is not seen: what is seen is
// each look's leader, in order, with no repeats. A look that fails for a
// reason retrying cannot mend by itself (another layout's nodes on the
// path, ErrLayoutMismatch; a node the client may not read, zk.ErrNoAuth)
// sends no event: Observe logs it at Warn and looks again after a pause
// growing to 2 s. A nil Election's channel is closed at once.
func (e *Election) Observe(ctx context.Context) <-chan Event {
	out := make(chan Event)
	if e.check(ctx) != nil {
		close(out)
		return out
	}
	go e.observe(ctx, out)
	return out
}

func (e *Election) observe(ctx context.Context, out chan<- Event) {
	defer close(out)
	w := e.watchDir(ctx)
	if w == nil {
		return
	}
	defer func() { _ = w.Close() }()
	var (
		queue   []Event
		last    *Event
		stale   = true // a change (or a reconnection) not looked at yet
		pause   = requeueMin
		retryIn = time.NewTimer(time.Hour) // armed only after a failed look
	)
	retryIn.Stop()
	defer retryIn.Stop()
	for {
		if stale {
			ev, err := e.look(ctx)
			switch {
			case err == nil:
				stale = false
				pause = requeueMin
				if last == nil || last.Node != ev.Node {
					queue = append(queue, ev)
					last = &ev
				}
			case ctx.Err() != nil || errors.Is(err, framework.ErrClosed):
				return
			case !retry.IsRetryable(err):
				// Not a passing failure (another layout on the path, a
				// node we may not read): say it where it is seen. The
				// look goes on, in case the cause goes.
				e.log.Warn("observe: look failed; trying again", zap.String("path", e.path), zap.Error(err))
				retryIn.Reset(pause)
				pause = min(2*pause, requeueMax)
			default:
				e.log.Debug("observe: look failed; trying again", zap.String("path", e.path), zap.Error(err))
				retryIn.Reset(pause)
				pause = min(2*pause, requeueMax)
			}
		}
		var send chan<- Event
		var next Event
		if len(queue) > 0 {
			send, next = out, queue[0]
		}
		select {
		case send <- next:
			queue[0] = Event{}
			queue = queue[1:]
		case ev, ok := <-w.Events():
			if !ok {
				return // ctx ended, or the client closed
			}
			// Children changed, the directory made or deleted, or a
			// reconnection (WatchResync: the changes made meanwhile, or
			// in the session before this one, were not seen): look again.
			if ev.Type != framework.WatchDataChanged {
				stale = true
			}
		case <-retryIn.C:
		case <-ctx.Done():
			return
		}
	}
}

// watchDir watches the election's directory until ctx ends; nil if ctx
// ended or the client closed first. Watch runs under the retry policy;
// when that gives up (a long partition) it is tried again after a pause.
func (e *Election) watchDir(ctx context.Context) *framework.Watcher {
	pause := requeueMin
	for {
		w, err := e.c.Watch(ctx, e.path)
		if err == nil {
			return w
		}
		if ctx.Err() != nil || errors.Is(err, framework.ErrClosed) {
			return nil
		}
		e.log.Debug("observe: watch failed; trying again", zap.String("path", e.path), zap.Error(err))
		if err := e.c.Pause(ctx, pause); err != nil {
			return nil
		}
		pause = min(2*pause, requeueMax)
	}
}

// look reads the leader: the first readable node of the directory, "no
// leader" when it is empty or missing.
func (e *Election) look(ctx context.Context) (Event, error) {
	children, _, err := e.c.Children(ctx, e.path)
	if errors.Is(err, zk.ErrNoNode) {
		return Event{}, nil
	}
	if err != nil {
		return Event{}, err
	}
	ps, nodes, err := e.readNodes(ctx, children, true)
	if err != nil {
		return Event{}, err
	}
	if len(ps) == 0 {
		return Event{}, nil
	}
	return Event{Leader: ps[0], Node: framework.JoinPath(e.path, nodes[0].name), Token: nodes[0].stat.Czxid}, nil
}
