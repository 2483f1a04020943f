package atomic_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	stdatomic "sync/atomic"
	"testing"
	"time"

	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/atomic"
	"github.com/gocurator/curator/zktest"
)

// gate holds the first write of the handles it is installed on (between
// its read and its write) until open, and counts every write.
type gate struct {
	once    sync.Once
	entered chan struct{}
	release chan struct{}
	writes  stdatomic.Int32
}

func newGate() *gate {
	return &gate{entered: make(chan struct{}), release: make(chan struct{})}
}

func (g *gate) install(ls ...*atomic.Long) {
	for _, l := range ls {
		atomic.SetBeforeWrite(l, func(bool) {
			g.writes.Add(1)
			first := false
			g.once.Do(func() { first = true })
			if first {
				close(g.entered)
				<-g.release
			}
		})
	}
}

type addOutcome struct {
	r   atomic.Result[int64]
	err error
}

func goIncrement(ctx context.Context, l *atomic.Long) <-chan addOutcome {
	ch := make(chan addOutcome, 1)
	go func() {
		r, err := l.Increment(ctx)
		ch <- addOutcome{r, err}
	}()
	return ch
}

// Goroutines of one process adding to one counter at once share one
// write: with a write in flight, 21 adds through 7 handles of the client
// (3 goroutines each) queue, and go out as one sum. Each is told its own
// place: the post-values are 2..22, each its pre-value plus one. An add
// through another client is not combined with them: it is applied while
// they wait.
func TestConcurrentAddsShareOneWrite(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t)
	ns := testkit.Unique(t)
	c := testkit.Connect(t, zkAddr, ns)
	first := atomic.NewLong(c, counterPath)
	handles := []*atomic.Long{first}
	for range 7 {
		handles = append(handles, atomic.NewLong(c, counterPath))
	}
	g := newGate()
	g.install(handles...)
	firstDone := goIncrement(ctx, first)
	<-g.entered
	var outs []<-chan addOutcome
	for _, l := range handles[1:] {
		for range 3 {
			outs = append(outs, goIncrement(ctx, l))
		}
	}
	testkit.Eventually(t, "21 adds queued behind the write in flight", func() bool { return atomic.Pending(first) == 21 })

	other := atomic.NewLong(testkit.Connect(t, zkAddr, ns), counterPath)
	if _, err := other.Add(ctx, 100); err != nil {
		t.Fatalf("an add through another client waited for this one's queue: %v", err)
	}
	close(g.release)
	if o := <-firstDone; o.err != nil || !o.r.Succeeded {
		t.Fatalf("first add: %+v, %v", o.r, o.err)
	}
	var posts []int64
	for i, ch := range outs {
		o := <-ch
		if o.err != nil || !o.r.Succeeded || o.r.PostValue != o.r.PreValue+1 {
			t.Fatalf("add %d: %+v, %v", i, o.r, o.err)
		}
		posts = append(posts, o.r.PostValue)
	}
	slices.Sort(posts)
	for i, p := range posts {
		// The first add's write was refused on the version once (the
		// other client's 100 came first), then made 101.
		if want := int64(102 + i); p != want {
			t.Fatalf("post-values %v; want 102..122, each once", posts)
		}
	}
	if got, err := atomic.NewLong(testkit.Connect(t, zkAddr, ns), counterPath).Get(ctx); err != nil || got != 122 {
		t.Fatalf("value %d, %v; want 122", got, err)
	}
	// The first add's write twice (held, then refused once), the 21 adds'
	// one write.
	if w := g.writes.Load(); w != 3 {
		t.Fatalf("%d writes for 22 adds; want 3", w)
	}
}

// An add whose ctx ends while it waits in the queue is not applied and
// returns at its ctx's end, not at the write's; the adds queued with it
// are applied.
func TestQueuedAddLeavesAtItsCtx(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t)
	ns := testkit.Unique(t)
	c := testkit.Connect(t, zkAddr, ns)
	l := atomic.NewLong(c, counterPath)
	g := newGate()
	g.install(l)
	firstDone := goIncrement(ctx, l)
	<-g.entered
	short, cancel := context.WithCancel(ctx)
	leaving := goIncrement(short, l)
	staying := goIncrement(ctx, l)
	testkit.Eventually(t, "two adds queued", func() bool { return atomic.Pending(l) == 2 })
	cancel()
	if o := <-leaving; !errors.Is(o.err, context.Canceled) || o.r.Succeeded {
		t.Fatalf("add whose ctx ended in the queue: %+v, %v; want context.Canceled", o.r, o.err)
	}
	close(g.release)
	for _, ch := range []<-chan addOutcome{firstDone, staying} {
		if o := <-ch; o.err != nil || !o.r.Succeeded {
			t.Fatalf("add: %+v, %v", o.r, o.err)
		}
	}
	if got, err := l.Get(ctx); err != nil || got != 2 {
		t.Fatalf("value %d, %v; want 2 (the cancelled add not applied)", got, err)
	}
}

// A combined write that ends unapplied because one member's ctx ended
// (here while the writing handle waited for its turn) is sent again
// without that member: the others are applied, and it is told its ctx's
// error.
func TestCombinedWriteGoesAgainWithoutAnEndedMember(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t)
	ns := testkit.Unique(t)
	c := testkit.Connect(t, zkAddr, ns)
	h1, h2, h3 := atomic.NewLong(c, counterPath), atomic.NewLong(c, counterPath), atomic.NewLong(c, counterPath)
	if err := h3.ForceSet(ctx, 0); err != nil {
		t.Fatal(err)
	}
	// h1 and h2 are each busy with a ForceSet held before its write, so a
	// batch written through either waits for its turn; h3's first add is
	// held so that the next two queue into one batch.
	g1, g2, g3 := newGate(), newGate(), newGate()
	g1.install(h1)
	g2.install(h2)
	g3.install(h3)
	force := func(l *atomic.Long) <-chan error {
		ch := make(chan error, 1)
		go func() { ch <- l.ForceSet(ctx, 0) }()
		return ch
	}
	f1, f2 := force(h1), force(h2)
	<-g1.entered
	<-g2.entered
	x := goIncrement(ctx, h3)
	<-g3.entered
	actx, cancelA := context.WithCancel(ctx)
	a := goIncrement(actx, h1)
	b := goIncrement(ctx, h2)
	testkit.Eventually(t, "two adds queued", func() bool { return atomic.Pending(h3) == 2 })
	close(g3.release)
	if o := <-x; o.err != nil || !o.r.Succeeded {
		t.Fatalf("first add: %+v, %v", o.r, o.err)
	}
	testkit.Eventually(t, "the two adds taken as one batch", func() bool { return atomic.Pending(h3) == 0 })
	cancelA()
	if o := <-a; !errors.Is(o.err, context.Canceled) || o.r.Succeeded {
		t.Fatalf("add whose ctx ended in its batch's wait: %+v, %v; want context.Canceled", o.r, o.err)
	}
	// h1's ForceSet first, then h2's, after which b's batch, waiting for
	// h2's turn, reads 0.
	close(g1.release)
	if err := <-f1; err != nil {
		t.Fatal(err)
	}
	close(g2.release)
	if err := <-f2; err != nil {
		t.Fatal(err)
	}
	if o := <-b; o.err != nil || !o.r.Succeeded || o.r.PostValue != 1 {
		t.Fatalf("the other member: %+v, %v; want applied alone, 0 -> 1", o.r, o.err)
	}
	if got, err := h3.Get(ctx); err != nil || got != 1 {
		t.Fatalf("value %d, %v; want 1", got, err)
	}
}

// The reply to a combined write is lost (the write applied, the
// connection cut before its reply came back): the stamp tells the write
// went through, and every add of the batch is applied once.
func TestCombinedWriteLostReplyAppliedOnce(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t)
	ns := testkit.Unique(t)
	proxy := zktest.NewProxy(t, zkAddr)
	c := testkit.Connect(t, proxy.Addr(), ns)
	l := atomic.NewLong(c, counterPath)
	if err := l.ForceSet(ctx, 10); err != nil {
		t.Fatal(err)
	}
	const oneWay = 100 * time.Millisecond
	var writes stdatomic.Int32
	held, release := make(chan struct{}), make(chan struct{})
	cut := make(chan struct{})
	atomic.SetBeforeWrite(l, func(bool) {
		switch writes.Add(1) {
		case 1: // hold the first add while four queue
			close(held)
			<-release
		case 2: // lose the reply of the batch's write
			proxy.SetDelay(oneWay)
			time.AfterFunc(oneWay*3/2, func() {
				proxy.Cut()
				proxy.SetDelay(0)
				proxy.Restore()
				close(cut)
			})
		}
	})
	firstDone := goIncrement(ctx, l)
	<-held
	var outs []<-chan addOutcome
	for range 4 {
		outs = append(outs, goIncrement(ctx, l))
	}
	testkit.Eventually(t, "four adds queued", func() bool { return atomic.Pending(l) == 4 })
	close(release)
	if o := <-firstDone; o.err != nil || !o.r.Succeeded || o.r.PostValue != 11 {
		t.Fatalf("first add: %+v, %v", o.r, o.err)
	}
	for i, ch := range outs {
		if o := <-ch; o.err != nil || !o.r.Succeeded {
			t.Fatalf("add %d of the batch whose reply was lost: %+v, %v", i, o.r, o.err)
		}
	}
	<-cut
	if got, err := atomic.NewLong(testkit.Connect(t, zkAddr, ns), counterPath).Get(ctx); err != nil || got != 15 {
		t.Fatalf("value %d, %v; want 15: each add once", got, err)
	}
	if w := writes.Load(); w != 2 {
		t.Fatalf("%d writes; want 2 (the batch's settled by its stamp)", w)
	}
}
