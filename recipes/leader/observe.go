package leader

import (
	"context"
	"errors"

	"github.com/go-zookeeper/zk"
	"go.uber.org/zap"

	"github.com/gocurator/curator/framework"
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
// children watch on the election's directory (an exists watch while the
// directory is missing); a watch pending when it ends stays on the server
// until the directory changes or the session ends. Watches being
// one-shot, a leader that comes and goes between two looks is not seen:
// what is seen is each look's leader, in order, with no repeats. A nil
// Election's channel is closed at once.
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
	var (
		queue []Event
		last  *Event
		watch <-chan zk.Event // pending watch; nil to look now
		pause = requeueMin
	)
	for {
		if watch == nil {
			ev, ch, err := e.look(ctx)
			if err != nil {
				if ctx.Err() != nil || errors.Is(err, framework.ErrClosed) {
					return
				}
				e.log.Debug("observe: look failed; trying again", zap.String("path", e.path), zap.Error(err))
				if err := e.c.Pause(ctx, pause); err != nil {
					return
				}
				pause = min(2*pause, requeueMax)
				continue
			}
			pause = requeueMin
			watch = ch
			if last == nil || last.Node != ev.Node {
				queue = append(queue, ev)
				last = &ev
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
		case <-watch:
			watch = nil
		case <-ctx.Done():
			return
		case <-e.c.Done():
			return
		}
	}
}

// look reads the leader and sets a watch that fires at the next change of
// the directory (or at its creation, if it is missing).
func (e *Election) look(ctx context.Context) (Event, <-chan zk.Event, error) {
	for {
		children, _, ch, err := e.c.ChildrenW(ctx, e.path)
		if errors.Is(err, zk.ErrNoNode) {
			st, ech, err := e.c.ExistsW(ctx, e.path)
			if err != nil {
				return Event{}, nil, err
			}
			if st != nil {
				continue // created meanwhile: list it
			}
			return Event{}, ech, nil
		}
		if err != nil {
			return Event{}, nil, err
		}
		ps, nodes, err := e.readNodes(ctx, children, true)
		if err != nil {
			return Event{}, nil, err
		}
		if len(ps) == 0 {
			return Event{}, ch, nil
		}
		return Event{Leader: ps[0], Node: framework.JoinPath(e.path, nodes[0].name), Token: nodes[0].stat.Czxid}, ch, nil
	}
}
