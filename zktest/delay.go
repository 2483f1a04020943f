package zktest

import (
	"net"
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
// A writer goroutine waits on a clock armed for the first queued chunk's
// due time: by send when the queue was idle, by the writer after each
// batch. With no delay and nothing queued, send writes at once from the
// reader's goroutine, as the proxy did before it had a delay; a chunk never
// overtakes one that is still queued.
type delayLine struct {
	c *proxyConn
	w net.Conn

	mu      sync.Mutex
	changed *sync.Cond // signalled on busy, closed and err changes (drain)
	q       []delayed
	busy    bool  // the writer is writing chunks it took off q
	started bool  // the writer goroutine was started
	closed  bool  // the connection is closed: queued chunks are dropped
	err     error // the first write failure; later sends fail with it
	clock   clock // armed for q[0]'s due time whenever q is not empty
}

// clock is what the writer sleeps on until a chunk is due.
type clock interface {
	// arm makes the clock fire at due (at once if it has passed),
	// replacing an earlier arming that has not fired.
	arm(due time.Time)
	// wait blocks until the clock fires; false once it is closed.
	wait() bool
	// close ends a wait in progress and every later one. It may be
	// called from any goroutine, once.
	close()
}

// delayed is a chunk and the time it may leave.
type delayed struct {
	due  time.Time
	data []byte
}

func newDelayLine(c *proxyConn, w net.Conn) *delayLine {
	l := &delayLine{c: c, w: w, clock: newClock()}
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
	idle := len(l.q) == 0 && !l.busy
	if d <= 0 && idle {
		// Nothing ahead of p, and only this goroutine adds to the queue.
		l.mu.Unlock()
		_, err := l.w.Write(p)
		return err
	}
	due := read.Add(d)
	l.q = append(l.q, delayed{due: due, data: append([]byte(nil), p...)})
	if idle {
		l.clock.arm(due)
	}
	if !l.started {
		l.started = true
		l.c.p.wg.Add(1)
		go l.run()
	}
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
	l.clock.close()
	l.changed.Broadcast()
}

// run is the writer: each time the clock fires it writes every chunk that
// is due by then in one write and arms the clock for the next. In a black
// hole the chunks are dropped instead, as a partition drops what is in
// flight.
func (l *delayLine) run() {
	defer l.c.p.wg.Done()
	var batch net.Buffers
	for {
		if !l.clock.wait() {
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
		if n == 0 {
			// Fired a little early by our clock: wait for the head.
			if len(l.q) > 0 {
				l.clock.arm(l.q[0].due)
			}
			l.mu.Unlock()
			continue
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
		if len(l.q) > 0 && l.err == nil {
			l.clock.arm(l.q[0].due)
		}
		l.changed.Broadcast()
		l.mu.Unlock()
		if err != nil {
			l.c.fail()
			return
		}
	}
}

// timerClock waits with Go's timers, which round a wait up to the
// netpoller's millisecond: a chunk may leave up to about a millisecond
// late. It is the fallback where no precise clock is available.
type timerClock struct {
	t    *time.Timer
	done chan struct{}
}

func newTimerClock() *timerClock {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &timerClock{t: t, done: make(chan struct{})}
}

func (k *timerClock) arm(due time.Time) { k.t.Reset(time.Until(due)) }

func (k *timerClock) wait() bool {
	select {
	case <-k.t.C:
		return true
	case <-k.done:
		return false
	}
}

func (k *timerClock) close() { close(k.done) }
