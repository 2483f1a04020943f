package shared

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// writeGrace is how long a write is still waited for after the caller's
// ctx ended: a round trip on a live connection.
const writeGrace = time.Second

// graced returns the context for a write the caller may stop waiting for:
// it ends writeGrace after ctx does, so that a write in flight as ctx ends
// is answered and its outcome known before the clean-up is sent, rather
// than abandoned and perhaps applied after the clean-up (a member node
// nobody owns, counted by the next round). done takes the write's error
// and returns it, or ctx's error when the grace ran out, and releases the
// context.
func graced(ctx context.Context) (context.Context, func(error) error) {
	wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	var mu sync.Mutex
	var timer *time.Timer
	ended := false
	stop := context.AfterFunc(ctx, func() {
		mu.Lock()
		defer mu.Unlock()
		if !ended {
			timer = time.AfterFunc(writeGrace, cancel)
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
			return fmt.Errorf("%w (the write was waited for %v more): %w", ctx.Err(), writeGrace, err)
		}
		return err
	}
}
