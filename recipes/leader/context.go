package leader

import (
	"context"
	"time"
)

// termCtx is a context that ends with a term: Run's function gets one, and
// Term.Context returns one. Its Done, Err and Value first look at the term
// (Term.Err, which judges the session by the clock) and, if the term has
// ended, cancel the context before answering: after a process pause past
// the session's deadline, the first look says so, before any goroutine had
// a chance to run. A context's Done is otherwise closed by a goroutine or a
// callback, which after a pause runs tens of milliseconds late (issue 33,
// item 8).
//
// The context proper is a cancelCtx under the parent (WithCancelCause),
// embedded: its Done channel is the one handed out, so a context derived
// from a termCtx is registered by the context package as that cancelCtx's
// child, without a goroutine, and closed in the same call that cancels it.
// Cancelling it with the term's error as the cause gives context.Cause the
// reason.
type termCtx struct {
	context.Context // the cancelCtx: under the parent, the term among its values
	t               *Term
	cancel          context.CancelCauseFunc
}

// newTermCtx returns the context of term t under parent: it has parent's
// values (and t's, for FromContext), deadline and cancellation, and ends
// when the term ends. A look at the term (Term.Done, Term.Err) that finds
// it ended cancels it too. It costs a goroutine, which wakes waiters
// blocked on Done when the term ends while nobody looks, and ends with the
// context.
func newTermCtx(parent context.Context, t *Term) *termCtx {
	inner, cancel := context.WithCancelCause(context.WithValue(parent, termKey{}, t))
	c := &termCtx{Context: inner, t: t, cancel: cancel}
	t.mu.Lock()
	t.ctxs = append(t.ctxs, c)
	t.mu.Unlock()
	go func() {
		select {
		case <-t.hold.Done():
			c.end()
		case <-inner.Done():
		}
	}()
	return c
}

// end cancels the context because the term ended, with its Err as the
// cause.
func (c *termCtx) end() { c.cancel(c.t.err()) }

// look cancels the context if the term has ended, judged now: Term.Err
// reads the session's deadline by the clock, and ends the term if it has
// passed.
func (c *termCtx) look() {
	if c.Context.Err() == nil && c.t.hold.Err() != nil {
		c.end()
	}
}

// Done returns a channel closed when the term ends or the parent is
// cancelled; closed already if the term is found ended now.
func (c *termCtx) Done() <-chan struct{} {
	c.look()
	return c.Context.Done()
}

// Err returns nil while the term lasts and the parent is not cancelled,
// then context.Canceled (or the parent's error).
func (c *termCtx) Err() error {
	c.look()
	return c.Context.Err()
}

// Value looks at the term first, so that context.Cause, which finds the
// cancelCtx through Value, sees a term found ended now.
func (c *termCtx) Value(key any) any {
	c.look()
	return c.Context.Value(key)
}

// Deadline is the parent's.
func (c *termCtx) Deadline() (time.Time, bool) { return c.Context.Deadline() }

// release cancels the context (Canceled) once it is no longer needed, and
// so ends its goroutine.
func (c *termCtx) release() { c.cancel(context.Canceled) }

// holdContext is a term's hold seen as a context, for the term's own
// watch of its node: Done is the hold's, with no goroutine, and the values
// are the Campaign's.
type holdContext struct{ t *Term }

func (c holdContext) Deadline() (time.Time, bool) { return time.Time{}, false }
func (c holdContext) Done() <-chan struct{}       { return c.t.hold.Done() }
func (c holdContext) Value(key any) any           { return c.t.vals.Value(key) }
func (c holdContext) Err() error {
	if c.t.hold.Err() != nil {
		return context.Canceled
	}
	return nil
}
