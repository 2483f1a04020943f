// Package writegrace gives a write that its caller may stop waiting for a
// short grace to be answered, so that recipes know its outcome before they
// clean up or report. A request handed to go-zookeeper cannot be taken
// back: a write abandoned at its ctx's end may still be applied after the
// caller was told it failed (an atomic update counted twice, a member node
// nobody owns counted by the next round of a double barrier). The
// framework deletes what an abandoned create makes; a set, a delete or a
// transaction cannot be undone, so recipes wait a little longer for them.
package writegrace

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Period is how long a write is still waited for after the caller's ctx
// ended: a round trip on a live connection, with room to spare.
const Period = time.Second

// Context returns the context to send a write under: it ends Period after
// ctx does (and carries ctx's values), so that a write in flight as ctx
// ends is answered and its outcome known. done takes the write's error and
// returns it; when the grace ran out too, it returns an error that wraps
// both ctx's error and the write's (its outcome is then unknown). done
// releases the context and must be called once. A nil ctx gives a nil
// wctx, which the framework's calls refuse (framework.ErrInvalidOption)
// as they refuse the caller's nil ctx.
func Context(ctx context.Context) (wctx context.Context, done func(error) error) {
	return contextAfter(ctx, Period)
}

func contextAfter(ctx context.Context, grace time.Duration) (context.Context, func(error) error) {
	if ctx == nil {
		return nil, func(err error) error { return err }
	}
	wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	var mu sync.Mutex
	var timer *time.Timer
	ended := false
	stop := context.AfterFunc(ctx, func() {
		mu.Lock()
		defer mu.Unlock()
		if !ended {
			timer = time.AfterFunc(grace, cancel)
		}
	})
	return wctx, func(err error) error {
		stop()
		mu.Lock()
		ended = true
		if timer != nil {
			timer.Stop()
		}
		mu.Unlock()
		graceOver := wctx.Err() != nil
		cancel()
		if err != nil && graceOver && ctx.Err() != nil {
			return fmt.Errorf("%w (the write was waited for %v more): %w", ctx.Err(), grace, err)
		}
		return err
	}
}
