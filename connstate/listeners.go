package connstate

import "github.com/gocurator/curator/internal/fanout"

// Listeners fans states out to listener functions. Every listener sees every
// published state, in order, on a goroutine of its own; Publish never blocks.
// Use NewListeners.
type Listeners struct {
	f fanout.Fanout[State]
}

// NewListeners returns an empty fan-out.
func NewListeners() *Listeners { return &Listeners{} }

// Add registers fn and returns a function that unregisters it. States
// published before Add are not delivered; states published after cancel are
// not delivered either, while states already queued still are. cancel never
// blocks and may be called from within fn; the listener's goroutine ends once
// its queue is drained. Add on closed Listeners returns a no-op cancel and
// never calls fn.
func (l *Listeners) Add(fn func(State)) (cancel func()) { return l.f.Add(fn) }

// Publish queues s for every registered listener. It never blocks.
func (l *Listeners) Publish(s State) { l.f.Publish(s) }

// Close delivers what is queued, stops every listener goroutine and waits
// for them, except for one that is running its listener at the time, which
// ends on its own once it has delivered what was queued: so a listener may
// call Close (or a client's Close), and a slow one never holds Close up.
func (l *Listeners) Close() { l.f.Close() }
