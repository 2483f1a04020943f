package leader

import (
	"context"
	"sync"

	"github.com/gocurator/curator/recipes/internal/lockhook"
	"github.com/gocurator/curator/recipes/locking"
)

// acquire is the candidacy's acquire on the lock loop, with one change:
// when ctx ends while our node's create is on its way, the acquire is
// stopped only once the create has returned (or the clean-up bound, a
// round trip on a live connection and none on a dead one, has passed).
//
// A create abandoned at ctx's end may still be applied, and the framework
// deletes its node only when the late reply comes: until then it stands
// in the election, first in line if nobody else campaigns, so the
// candidacy would return while a node of ours, with no term, leads the
// election and every later candidate waits behind it (issue 33's
// abandoned-write class). Letting the create return hands the node to the
// loop, which deletes it in the foreground before the acquire returns, so
// a cancelled Campaign leaves nothing when it returns, as it promises. The
// price: Campaign returns up to one round trip after ctx's end, the bound
// every clean-up here has (framework.Client.CleanupContext).
//
// The caller reports ctx's error when ctx has ended: the acquire's own
// context ends with context.Canceled whatever ctx's error was.
func (e *Election) acquire(ctx context.Context) (*locking.Hold, error) {
	created := make(chan struct{})
	var once sync.Once
	hooks := &lockhook.Hooks{Queued: func() { once.Do(func() { close(created) }) }}
	actx, cancel := context.WithCancel(lockhook.With(context.WithoutCancel(ctx), hooks))
	defer cancel()
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		select {
		case <-ctx.Done():
		case <-done:
			return
		}
		select {
		case <-created:
		default:
			// The first create may be on its way: let it return.
			wctx, wcancel := e.c.CleanupContext(ctx)
			select {
			case <-created:
			case <-wctx.Done():
			case <-done:
			}
			wcancel()
		}
		cancel()
	}()
	h, err := e.l.Acquire(actx)
	close(done)
	<-stopped
	return h, err
}
