package queue

import (
	"context"
	"errors"
	"fmt"
	"path"
	"sync"

	"github.com/go-zookeeper/zk"
	"go.uber.org/zap"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/fanout"
)

// Limits of the background puts.
const (
	// maxBatch is the most puts written in one transaction.
	maxBatch = 64
	// maxFails is the most failed puts a Flush names; it counts the rest.
	maxFails = 16
)

// PutEvent tells a put listener (WithPutListener) of one background put
// that completed (Curator's QueuePutListener).
type PutEvent struct {
	// Items are the put's items: one for PutAsync, a PutMultiAsync's all.
	Items [][]byte
	// Name is the name of the item's node ("queue-0000000042"), "" when
	// the put failed.
	Name string
	// Err is why the put failed, nil when it succeeded. A put failed by
	// a lost connection (or by Close, ErrClosed, after its write was sent)
	// may have been applied all the same, as a failed Put may.
	Err error
}

// WithPutListener sets fn to be told of each completed put of the Queue
// (Curator's getPutListenerContainer), success or failure (Curator's hears
// successes only). Background puts (PutAsync, PutMultiAsync) are told in
// the order they were accepted, on the queue's writing goroutine, which fn
// holds up: keep it short. A Queue's Put or PutMulti is told on its
// caller's goroutine before it returns, so fn may run on several
// goroutines at once when puts are made concurrently. The puts of the id,
// priority and delay queues are not told.
func WithPutListener(fn func(PutEvent)) Option {
	return func(o *options) {
		if fn == nil && o.invalid == nil {
			o.invalid = fmt.Errorf("%w: nil put listener", ErrInvalidOption)
		}
		o.putListener = fn
	}
}

// WithPutBuffer sets how many background puts may wait to be written,
// n > 0, default 1000; together they also hold at most 8 times
// jute.maxbuffer of data. A PutAsync that finds the buffer full blocks
// until there is room or its ctx ends.
func WithPutBuffer(n int) Option {
	return func(o *options) {
		if n <= 0 && o.invalid == nil {
			o.invalid = fmt.Errorf("%w: put buffer %d, want > 0", ErrInvalidOption, n)
		}
		o.putBuffer = n
	}
}

// PutAsync accepts item for a put in the background (Curator's
// putInBackground) and returns: the item is written as Put writes it, its
// own "queue-<seq>" node, with other waiting puts in one transaction when
// there are several. It blocks only while WithPutBuffer puts wait already
// (until there is room, ctx's end: ctx's error, or Close: ErrClosed). An
// item that cannot fit in jute.maxbuffer is refused at once with
// ErrDataTooLarge. The put's outcome goes to the put listener
// (WithPutListener) and to the next Flush; Close writes what waits.
func (q *Queue) PutAsync(ctx context.Context, item []byte) error {
	if err := q.check(ctx, "put async"); err != nil {
		return err
	}
	return q.wrap("put async", q.puts.accept(ctx, [][]byte{item}))
}

// PutMultiAsync is PutAsync for PutMulti: items go into one node, in the
// background. An empty items is refused with ErrInvalidOption.
func (q *Queue) PutMultiAsync(ctx context.Context, items [][]byte) error {
	if err := q.check(ctx, "put multi async"); err != nil {
		return err
	}
	if len(items) == 0 {
		return q.wrap("put multi async", fmt.Errorf("%w: no items", ErrInvalidOption))
	}
	return q.wrap("put multi async", q.puts.accept(ctx, items))
}

// Flush waits until every background put accepted before the call has
// completed (Curator's flushPuts), and returns their failures not yet
// returned by an earlier Flush (nil when there is none), or ctx's error
// when ctx ends first (the puts go on). It may be called after Close.
func (q *Queue) Flush(ctx context.Context) error {
	if q == nil {
		return fmt.Errorf("queue: flush: %w", ErrNilHandle)
	}
	if err := checkCtx(ctx); err != nil {
		return q.wrap("flush", err)
	}
	return q.wrap("flush", q.puts.flush(ctx))
}

// putDone ends a foreground put: the listener is told, the error wrapped.
func (q *Queue) putDone(verb string, items [][]byte, created string, err error) error {
	err = q.wrap(verb, err)
	if fn := q.opts.putListener; fn != nil {
		ev := PutEvent{Items: items, Err: err}
		if err == nil {
			ev.Name = path.Base(created)
		}
		fn(ev)
	}
	return err
}

// putter writes a Queue's background puts, one goroutine while some wait.
type putter struct {
	q      *Queue
	ctx    context.Context // the writes': ends when Close gives up
	cancel context.CancelFunc

	mu        sync.Mutex
	waiting   []*pendingPut // accepted, not yet taken by the writer, oldest first
	inflight  int           // taken by the writer, not yet completed
	bytes     int           // data of waiting and inflight puts
	accepted  uint64        // the last put accepted
	completed uint64        // every put up to this one has completed
	fails     []error       // failures not yet returned by Flush, oldest first
	more      int           // failures past maxFails
	failSeq   []uint64      // the put of each failure in fails
	moreSeq   uint64        // the last put counted in more
	running   bool          // the writer goroutine runs
	closed    bool          // Close: nothing more is accepted
	room      fanout.Signal // notified when puts leave the buffer, and at Close
	progress  fanout.Signal // notified when puts complete
}

type pendingPut struct {
	seq   uint64
	items [][]byte
	data  []byte // the node's data (the item framing)
}

func newPutter(q *Queue) *putter {
	ctx, cancel := context.WithCancel(context.Background())
	return &putter{q: q, ctx: ctx, cancel: cancel}
}

// byteCap is the most data the buffer holds.
func (p *putter) byteCap() int { return 8 * p.q.c.JuteMaxBuffer() }

// accept queues items as one put, starting the writer if it is not
// running; it waits for room while the buffer is full.
func (p *putter) accept(ctx context.Context, items [][]byte) error {
	data := encodeItems(items)
	// A create carries the path and the ACL too: refuse what cannot fit
	// (the write refuses what does not, reported as the put's failure).
	if len(data)+len(p.q.path)+len(itemPrefix) > p.q.c.JuteMaxBuffer() {
		return fmt.Errorf("%w: an item node of %d bytes", ErrDataTooLarge, len(data))
	}
	for {
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			return ErrClosed
		}
		n := len(p.waiting) + p.inflight
		if n == 0 || (n < p.q.opts.putBuffer && p.bytes+len(data) <= p.byteCap()) {
			p.accepted++
			p.waiting = append(p.waiting, &pendingPut{seq: p.accepted, items: items, data: data})
			p.bytes += len(data)
			if !p.running {
				p.running = true
				go p.write()
			}
			p.mu.Unlock()
			return nil
		}
		room := p.room.C()
		p.mu.Unlock()
		select {
		case <-room:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// write is the writer goroutine: it writes batches of waiting puts until
// none waits.
func (p *putter) write() {
	for {
		batch := p.take()
		if batch == nil {
			return
		}
		names, errs := p.writeBatch(batch)
		p.complete(batch, names, errs)
	}
}

// take removes the next batch from the waiting puts: up to maxBatch, and
// no more data than half jute.maxbuffer unless the first alone is larger.
// It returns nil, the writer stopped, when none waits.
func (p *putter) take() []*pendingPut {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.waiting) == 0 {
		p.running = false
		p.progress.Notify() // for idle
		return nil
	}
	size, n := 0, 0
	for n < len(p.waiting) && n < maxBatch {
		size += len(p.waiting[n].data) + len(p.q.path) + 64
		if n > 0 && size > p.q.c.JuteMaxBuffer()/2 {
			break
		}
		n++
	}
	batch := p.waiting[:n:n]
	p.waiting = p.waiting[n:]
	p.inflight += n
	return batch
}

// writeBatch writes the batch's nodes: one create for one put, one
// transaction of creates for several (each put its own node, as Put
// makes it). A refused transaction fails all its puts with its error:
// what refuses one of them refuses them all (the queue's path, the
// connection), as no put of a batch is large enough to be refused alone
// (one over half jute.maxbuffer is a batch of its own). After Close gave
// up, the puts fail with ErrClosed.
func (p *putter) writeBatch(batch []*pendingPut) ([]string, []error) {
	names, errs := make([]string, len(batch)), make([]error, len(batch))
	if p.ctx.Err() != nil {
		for i := range batch {
			errs[i] = ErrClosed
		}
		return names, errs
	}
	if len(batch) == 1 {
		created, err := p.q.createNode(p.ctx, itemPrefix, batch[0].data)
		if err == nil {
			names[0] = path.Base(created)
		}
		errs[0] = p.closedErr(err)
		return names, errs
	}
	res, err := p.multi(batch)
	for i := range batch {
		if err != nil {
			errs[i] = p.closedErr(err)
		} else {
			names[i] = path.Base(res[i].String)
		}
	}
	return names, errs
}

// multi writes the batch in one transaction, making the queue's path when
// it is missing.
func (p *putter) multi(batch []*pendingPut) ([]zk.MultiResponse, error) {
	ops := make([]framework.Op, len(batch))
	for i, b := range batch {
		ops[i] = framework.CreateOp(framework.JoinPath(p.q.path, itemPrefix), b.data, framework.PersistentSequential)
	}
	res, err := p.q.c.Multi(p.ctx, ops...)
	if errors.Is(err, zk.ErrNoNode) {
		p.q.setEnsured(false)
		if err = p.q.ensure(p.ctx); err == nil {
			res, err = p.q.c.Multi(p.ctx, ops...)
		}
	}
	return res, err
}

// closedErr is a write's error, ErrClosed once Close gave up on it.
func (p *putter) closedErr(err error) error {
	if err != nil && p.ctx.Err() != nil {
		return fmt.Errorf("%w (the write was under way and may have been applied): %w", ErrClosed, err)
	}
	return err
}

// complete tells the listener of the batch's puts, in order, then counts
// them complete.
func (p *putter) complete(batch []*pendingPut, names []string, errs []error) {
	for i, b := range batch {
		if errs[i] != nil {
			errs[i] = p.q.wrap("put async", errs[i])
			p.q.log.Debug("background put failed", zap.Error(errs[i]))
		}
		if fn := p.q.opts.putListener; fn != nil {
			fn(PutEvent{Items: b.items, Name: names[i], Err: errs[i]})
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, b := range batch {
		p.bytes -= len(b.data)
		if errs[i] == nil {
			continue
		}
		if len(p.fails) < maxFails {
			p.fails = append(p.fails, errs[i])
			p.failSeq = append(p.failSeq, b.seq)
		} else {
			p.more++
			p.moreSeq = b.seq
		}
	}
	p.inflight -= len(batch)
	p.completed = batch[len(batch)-1].seq
	p.room.Notify()
	p.progress.Notify()
}

// flush waits until the puts accepted so far have completed and returns
// their failures.
func (p *putter) flush(ctx context.Context) error {
	p.mu.Lock()
	target := p.accepted
	for p.completed < target {
		ch := p.progress.C()
		p.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
		p.mu.Lock()
	}
	defer p.mu.Unlock()
	n := 0
	for n < len(p.fails) && p.failSeq[n] <= target {
		n++
	}
	errs := p.fails[:n:n]
	p.fails, p.failSeq = p.fails[n:], p.failSeq[n:]
	if p.more > 0 && p.moreSeq <= target {
		errs = append(errs, fmt.Errorf("and %d more puts failed", p.more))
		p.more = 0
	}
	return errors.Join(errs...)
}

// close refuses further puts and writes those waiting, within ctx; when
// ctx ends first, the waiting puts fail with ErrClosed (and so does the
// one being written, which may have been applied), and close returns
// ctx's error once the writer has stopped.
func (p *putter) close(ctx context.Context) error {
	p.mu.Lock()
	p.closed = true
	p.room.Notify()
	p.mu.Unlock()
	defer p.cancel()
	if err := p.idle(ctx.Done()); err == nil {
		return nil
	}
	p.cancel()
	_ = p.idle(nil)
	return ctx.Err()
}

// idle waits until the writer has stopped, or stop is closed.
func (p *putter) idle(stop <-chan struct{}) error {
	for {
		p.mu.Lock()
		running, ch := p.running, p.progress.C()
		p.mu.Unlock()
		if !running {
			return nil
		}
		select {
		case <-ch:
		case <-stop:
			return context.Canceled
		}
	}
}
