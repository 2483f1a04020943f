package zktest

import (
	"net"
	"runtime"
	"sync"
	"time"
)

// delayLine passes the chunks of one direction of a proxied connection on
// to w, in the order they were read, each no earlier than its read time
// plus the proxy's delay when it was read. Chunks wait in a queue, not in
// the reader: the reader goes on reading while earlier chunks wait, so the
// delay adds latency without limiting throughput (a chunk read 10µs after
// another leaves 10µs after it). Chunks that are due together leave in one
// write.
//
// With no delay and nothing queued, send writes at once from the reader's
// goroutine, as the proxy did before it had a delay; a chunk never
// overtakes one that is still queued.
type delayLine struct {
	c *proxyConn
	w net.Conn

	mu      sync.Mutex
	changed *sync.Cond // signalled on queue, busy, closed and err changes
	q       []delayed
	busy    bool  // the writer is writing chunks it took off q
	started bool  // the writer goroutine was started
	closed  bool  // the connection is closed: queued chunks are dropped
	err     error // the first write failure; later sends fail with it
	done    chan struct{}
	clock   releaseClock
}

// delayed is a chunk and the time it may leave.
type delayed struct {
	due  time.Time
	data []byte
}

func newDelayLine(c *proxyConn, w net.Conn) *delayLine {
	l := &delayLine{c: c, w: w, done: make(chan struct{})}
	l.changed = sync.NewCond(&l.mu)
	return l
}

// send passes p on after the proxy's current delay; it copies p when it
// queues it, so the caller may reuse p at once. It fails once the line has
// failed or closed.
func (l *delayLine) send(p []byte) error {
	read := time.Now()
	d := l.c.p.Delay()
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return net.ErrClosed
	}
	if l.err != nil {
		err := l.err
		l.mu.Unlock()
		return err
	}
	if d <= 0 && len(l.q) == 0 && !l.busy {
		// Nothing ahead of p, and only this goroutine adds to the queue.
		l.mu.Unlock()
		_, err := l.w.Write(p)
		return err
	}
	l.q = append(l.q, delayed{due: read.Add(d), data: append([]byte(nil), p...)})
	if !l.started {
		l.started = true
		l.c.p.wg.Add(1)
		go l.run()
	}
	l.changed.Broadcast()
	l.mu.Unlock()
	return nil
}

// drain blocks until every queued chunk has been written (or dropped), or
// the line has closed or failed: a side that ends is passed on after the
// bytes it sent before it ended.
func (l *delayLine) drain() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for (len(l.q) > 0 || l.busy) && !l.closed && l.err == nil {
		l.changed.Wait()
	}
}

// close drops whatever is queued and ends the writer.
func (l *delayLine) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return
	}
	l.closed = true
	l.q = nil
	close(l.done)
	l.changed.Broadcast()
}

// run is the writer: it sleeps until the first queued chunk is due, then
// writes every chunk that is due by then in one write. In a black hole the
// chunks are dropped instead, as a partition drops what is in flight.
func (l *delayLine) run() {
	defer l.c.p.wg.Done()
	var batch net.Buffers
	for {
		l.mu.Lock()
		for len(l.q) == 0 && !l.closed {
			l.changed.Wait()
		}
		if l.closed {
			l.mu.Unlock()
			return
		}
		due := l.q[0].due
		l.mu.Unlock()

		if !l.clock.sleepUntil(due, l.done) {
			return // closed
		}

		l.mu.Lock()
		if l.closed {
			l.mu.Unlock()
			return
		}
		now := time.Now()
		n := 0
		batch = batch[:0]
		for n < len(l.q) && !l.q[n].due.After(now) {
			batch = append(batch, l.q[n].data)
			n++
		}
		clear(l.q[:n]) // let the chunks be collected
		l.q = l.q[n:]
		l.busy = true
		l.mu.Unlock()

		var err error
		if !l.c.dropping() {
			bufs := batch // WriteTo consumes its receiver
			_, err = bufs.WriteTo(l.w)
		}

		l.mu.Lock()
		l.busy = false
		if err != nil && l.err == nil {
			l.err = err
		}
		l.changed.Broadcast()
		l.mu.Unlock()
		if err != nil {
			l.c.fail()
			return
		}
	}
}

// releaseClock sleeps until a chunk is due as precisely as the operating
// system allows, and never returns before it: Go's timers round waits up
// to about a millisecond, which would swamp a sub-millisecond delay, so the
// last stretch of a wait is a precise sleep (preciseSleep) that is asked to
// end a little early by the wake-up lateness the line has seen (late), and
// what is left is yielded away.
type releaseClock struct {
	late time.Duration // estimate of how late a precise sleep wakes
}

// timerSlop is how far ahead of the due time a wait leaves Go's timers for
// the precise sleep.
const timerSlop = 2 * time.Millisecond

// sleepUntil returns once due has passed, or false at once when done is
// closed during a long wait.
func (k *releaseClock) sleepUntil(due time.Time, done <-chan struct{}) bool {
	if rest := time.Until(due) - timerSlop; rest > 0 {
		t := time.NewTimer(rest)
		select {
		case <-t.C:
		case <-done:
			t.Stop()
			return false
		}
	}
	if ask := time.Until(due) - k.late; ask > 0 && preciseSleep != nil {
		start := time.Now()
		preciseSleep(ask)
		over := time.Since(start) - ask
		// Follow a lower estimate at once and a higher one slowly, so
		// that early wake-ups (which cost a yield loop) stay rare.
		if over < k.late {
			k.late = (k.late + max(over, 0)) / 2
		} else {
			k.late += (over - k.late) / 16
		}
	}
	for time.Now().Before(due) {
		if preciseSleep == nil {
			time.Sleep(time.Until(due))
			continue
		}
		runtime.Gosched()
	}
	return true
}
