package semaphore

import "github.com/gocurator/curator/internal/fanout"

// wake is a re-armable broadcast: channel returns a channel that the next
// fire closes.
type wake struct{ s fanout.Signal }

func newWake() *wake { return &wake{} }

func (w *wake) channel() <-chan struct{} { return w.s.C() }

func (w *wake) fire() { w.s.Notify() }

// relay fires w at every change that next's channels report, until done
// closes, on one goroutine however many changes there are; the returned
// channel closes when that goroutine has ended. next returns a channel
// closed at the next change (shared.Count's Watch), and is called once
// before relay returns, so every change after relay returns fires w.
//
// The next channel is taken before each fire, not after: a change between
// the two then closes it and fires again, so a reader that takes w's
// channel and then the current value can never miss a change (it sees the
// change in the value, or its channel is closed by a later fire).
func relay(w *wake, next func() <-chan struct{}, done <-chan struct{}) <-chan struct{} {
	ch := next()
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		for {
			select {
			case <-ch:
			case <-done:
				return
			}
			ch = next()
			w.fire()
		}
	}()
	return finished
}
