package queue_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/curatorjava"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/queue"
	"github.com/gocurator/curator/zktest"
)

// putLog is a put listener that records what it is told.
type putLog struct {
	mu     sync.Mutex
	events []queue.PutEvent
}

func (l *putLog) listen(ev queue.PutEvent) {
	l.mu.Lock()
	l.events = append(l.events, ev)
	l.mu.Unlock()
}

// listened returns a Queue at path whose put listener is a putLog.
func listened(c *framework.Client, path string) (*queue.Queue, *putLog) {
	log := &putLog{}
	return queue.New(c, path, queue.WithPutListener(log.listen)), log
}

func (l *putLog) all() []queue.PutEvent {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.events)
}

// Background puts are all written by Flush's return, each its own node in
// Curator's framing, several to a transaction, and told to the listener in
// the order they were accepted.
func TestPutAsyncFlush(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t)
	c := testkit.Connect(t, zkAddr, testkit.Unique(t))
	q, log := listened(c, "/q")
	t.Cleanup(func() { _ = q.Close(ctx) })
	const n = 200
	for i := range n {
		if err := q.PutAsync(ctx, []byte(fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
	}
	if err := q.PutMultiAsync(ctx, [][]byte{[]byte("m1"), []byte("m2")}); err != nil {
		t.Fatal(err)
	}
	if err := q.Flush(ctx); err != nil {
		t.Fatalf("Flush: %v", err)
	}
	events := log.all()
	if len(events) != n+1 {
		t.Fatalf("%d events, want %d", len(events), n+1)
	}
	zxids := map[int64]bool{}
	prev := ""
	for i, ev := range events {
		if ev.Err != nil {
			t.Fatalf("put %d: %v", i, ev.Err)
		}
		if ev.Name <= prev || !strings.HasPrefix(ev.Name, "queue-") {
			t.Fatalf("put %d named %q after %q", i, ev.Name, prev)
		}
		prev = ev.Name
		data, st, err := c.Get(ctx, "/q/"+ev.Name)
		if err != nil {
			t.Fatal(err)
		}
		got, err := queue.DecodeItems(data)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", ev.Items) {
			t.Fatalf("node %s holds %q, the event says %q", ev.Name, got, ev.Items)
		}
		zxids[st.Czxid] = true
	}
	if want := fmt.Sprintf("%q", [][]byte{[]byte("m1"), []byte("m2")}); fmt.Sprintf("%q", events[n].Items) != want {
		t.Fatalf("last event %q, want the multi put", events[n].Items)
	}
	if len(zxids) == len(events) {
		t.Fatalf("%d transactions for %d puts: none batched", len(zxids), len(events))
	}
	t.Logf("%d puts in %d transactions", len(events), len(zxids))
	if got := items(t, c, "/q", "queue-"); len(got) != n+1 {
		t.Fatalf("%d nodes, want %d", len(got), n+1)
	}
}

// A full buffer blocks PutAsync until there is room, or its ctx's end;
// it never grows past WithPutBuffer.
func TestPutAsyncBackPressure(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t)
	c := testkit.Connect(t, zkAddr, testkit.Unique(t))
	release := make(chan struct{})
	first := make(chan struct{}, 1)
	q := queue.New(c, "/q", queue.WithPutBuffer(2), queue.WithPutListener(func(ev queue.PutEvent) {
		select {
		case first <- struct{}{}:
			<-release // the writer is held: its put stays in the buffer
		default:
		}
	}))
	t.Cleanup(func() { _ = q.Close(ctx) })
	if err := q.PutAsync(ctx, []byte("a")); err != nil {
		t.Fatal(err)
	}
	<-first
	if err := q.PutAsync(ctx, []byte("b")); err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	if err := q.PutAsync(short, []byte("c")); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("PutAsync into a full buffer: %v, want DeadlineExceeded", err)
	}
	done := make(chan error, 1)
	go func() { done <- q.PutAsync(ctx, []byte("d")) }()
	select {
	case err := <-done:
		t.Fatalf("PutAsync into a full buffer returned %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := q.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, n := range items(t, c, "/q", "queue-") {
		data, _, err := c.Get(ctx, "/q/"+n)
		if err != nil {
			t.Fatal(err)
		}
		it, _ := queue.DecodeItems(data)
		got = append(got, string(it[0]))
	}
	if want := []string{"a", "b", "d"}; !slices.Equal(got, want) {
		t.Fatalf("queue holds %v, want %v", got, want)
	}
}

// Close writes the puts that wait before it returns; later puts fail with
// ErrClosed, and Flush still answers.
func TestCloseFlushesPuts(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t)
	c := testkit.Connect(t, zkAddr, testkit.Unique(t))
	q, log := listened(c, "/q")
	for i := range 50 {
		if err := q.PutAsync(ctx, []byte(fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
	}
	if err := q.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if n := len(log.all()); n != 50 {
		t.Fatalf("%d puts told at Close's return, want 50", n)
	}
	if n := len(items(t, c, "/q", "queue-")); n != 50 {
		t.Fatalf("%d nodes at Close's return, want 50", n)
	}
	if err := q.PutAsync(ctx, []byte("late")); !errors.Is(err, queue.ErrClosed) {
		t.Fatalf("PutAsync after Close: %v, want ErrClosed", err)
	}
	if err := q.Flush(ctx); err != nil {
		t.Fatalf("Flush after Close: %v", err)
	}
}

// A Close whose ctx ends while the connection is down fails the puts that
// wait with ErrClosed, each told once to the listener and to Flush: none
// is lost unsaid.
func TestCloseFailsPutsItCannotWrite(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t)
	ns := testkit.Unique(t)
	proxy := zktest.NewProxy(t, zkAddr)
	c := testkit.Connect(t, proxy.Addr(), ns)
	q, log := listened(c, "/q")
	if err := q.Put(ctx, []byte("made the path")); err != nil {
		t.Fatal(err)
	}
	proxy.Cut()
	const n = 20
	for i := range n {
		if err := q.PutAsync(ctx, []byte(fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
	}
	cctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if err := q.Close(cctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Close: %v, want DeadlineExceeded", err)
	}
	events := log.all()[1:] // the first is the Put
	if len(events) != n {
		t.Fatalf("%d background puts told, want %d", len(events), n)
	}
	for i, ev := range events {
		if !errors.Is(ev.Err, queue.ErrClosed) {
			t.Fatalf("put %d: %v, want ErrClosed", i, ev.Err)
		}
	}
	err := q.Flush(ctx)
	if !errors.Is(err, queue.ErrClosed) || !strings.Contains(err.Error(), "more puts failed") {
		t.Fatalf("Flush: %v, want ErrClosed and a count", err)
	}
	if err := q.Flush(ctx); err != nil {
		t.Fatalf("second Flush: %v, want nil (told once)", err)
	}
	proxy.Restore()
}

// A put the servers refuse is told to the listener and to Flush with the
// servers' error; the puts batched with it that could be written are.
func TestPutAsyncFailure(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t)
	c := testkit.Connect(t, zkAddr, testkit.Unique(t))
	if _, err := c.Create(ctx, "/eph", nil, framework.WithMode(framework.Ephemeral)); err != nil {
		t.Fatal(err)
	}
	q, log := listened(c, "/eph/q")
	t.Cleanup(func() { _ = q.Close(ctx) })
	for i := range 3 {
		if err := q.PutAsync(ctx, []byte(fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
	}
	err := q.Flush(ctx)
	if err == nil {
		t.Fatal("Flush: nil, want the puts' failures")
	}
	for i, ev := range log.all() {
		if ev.Err == nil || ev.Name != "" {
			t.Fatalf("put %d under an ephemeral: %+v", i, ev)
		}
	}
	if n := len(log.all()); n != 3 {
		t.Fatalf("%d puts told, want 3", n)
	}
}

// The client's Close fails the puts that wait with ErrClosed; no goroutine
// is left (TestMain checks).
func TestClientCloseFailsPuts(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t)
	c, err := framework.Connect(ctx, zkAddr, framework.WithNamespace(testkit.Unique(t)))
	if err != nil {
		t.Fatal(err)
	}
	q, log := listened(c, "/q")
	for i := range 100 {
		if err := q.PutAsync(ctx, []byte(fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	err = q.Flush(ctx)
	events := log.all()
	if len(events) != 100 {
		t.Fatalf("%d puts told, want 100", len(events))
	}
	failed := 0
	for _, ev := range events {
		if ev.Err != nil {
			failed++
			if !errors.Is(ev.Err, framework.ErrClosed) {
				t.Fatalf("put failed with %v, want ErrClosed", ev.Err)
			}
		}
	}
	if (failed > 0) != (err != nil) {
		t.Fatalf("Flush: %v with %d puts failed", err, failed)
	}
}

// Bad input to the background puts is refused at once.
func TestPutAsyncBadInput(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t)
	c := testkit.Connect(t, zkAddr, testkit.Unique(t), framework.WithJuteMaxBuffer(4096))
	var nilCtx context.Context
	q := queue.New(c, "/q")
	t.Cleanup(func() { _ = q.Close(ctx) })
	tests := []struct {
		name string
		call func() error
		want error
	}{
		{"nil ctx", func() error { return q.PutAsync(nilCtx, []byte("x")) }, queue.ErrInvalidOption},
		{"nil ctx multi", func() error { return q.PutMultiAsync(nilCtx, [][]byte{[]byte("x")}) }, queue.ErrInvalidOption},
		{"nil ctx flush", func() error { return q.Flush(nilCtx) }, queue.ErrInvalidOption},
		{"empty multi", func() error { return q.PutMultiAsync(ctx, nil) }, queue.ErrInvalidOption},
		{"too large", func() error { return q.PutAsync(ctx, make([]byte, 5000)) }, queue.ErrDataTooLarge},
		{"buffer 0", func() error { return queue.New(c, "/q", queue.WithPutBuffer(0)).PutAsync(ctx, nil) }, queue.ErrInvalidOption},
		{"nil listener", func() error { return queue.New(c, "/q", queue.WithPutListener(nil)).PutAsync(ctx, nil) }, queue.ErrInvalidOption},
		{"nil handle", func() error { return (*queue.Queue)(nil).PutAsync(ctx, nil) }, queue.ErrNilHandle},
		{"nil handle flush", func() error { return (*queue.Queue)(nil).Flush(ctx) }, queue.ErrNilHandle},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.call(); !errors.Is(err, tt.want) {
				t.Fatalf("%v, want %v", err, tt.want)
			}
		})
	}
	if err := q.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if st, err := c.Exists(ctx, "/q"); err != nil || st != nil {
		t.Fatalf("/q after refused puts: %v, %v", st, err)
	}
}

// A Put or PutMulti is told to the put listener too (as Curator's
// foreground puts are), before it returns; a failed one with its error.
func TestPutListenerHearsForegroundPuts(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t)
	c := testkit.Connect(t, zkAddr, testkit.Unique(t))
	q, log := listened(c, "/q")
	if err := q.Put(ctx, []byte("a")); err != nil {
		t.Fatal(err)
	}
	if err := q.PutMulti(ctx, [][]byte{[]byte("b"), []byte("c")}); err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithCancel(ctx)
	cancel()
	putErr := q.Put(short, []byte("d"))
	events := log.all()
	if len(events) != 3 {
		t.Fatalf("%d puts told, want 3", len(events))
	}
	names := items(t, c, "/q", "queue-")
	if events[0].Name != names[0] || events[1].Name != names[1] || len(events[1].Items) != 2 {
		t.Fatalf("told %+v, nodes %v", events[:2], names)
	}
	if putErr == nil || !errors.Is(events[2].Err, context.Canceled) || events[2].Name != "" {
		t.Fatalf("a cancelled Put: %v, told %+v", putErr, events[2])
	}
}

// Curator 5.4 consumes background puts, batched or not, in the order they
// were accepted: each is a node as Put makes it.
func TestInteropPutAsyncJavaConsumes(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t)
	path := "/interop/" + testkit.Unique(t) + "/q"
	java := curatorjava.StartDriver(t, zkAddr)
	c := testkit.Connect(t, zkAddr, "")
	q := queue.New(c, path)
	t.Cleanup(func() { _ = q.Close(ctx) })
	var want []string
	for i := range 30 {
		want = append(want, fmt.Sprint("async", i))
		if err := q.PutAsync(ctx, []byte(want[i])); err != nil {
			t.Fatal(err)
		}
	}
	if err := q.PutMultiAsync(ctx, [][]byte{[]byte("m1"), []byte("m2")}); err != nil {
		t.Fatal(err)
	}
	want = append(want, "m1", "m2")
	if err := q.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	java.MustDo(fmt.Sprintf("dqconsumer k %s - ok", path))
	if got := javaItems(t, java, "k", len(want)); !slices.Equal(got, want) {
		t.Fatalf("Java consumed %v, want %v", got, want)
	}
}

// A put that cannot be written fails alone: one too large to share a
// transaction is written in one of its own, and the puts waiting with it
// are written.
func TestPutAsyncBadPutFailsAlone(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t)
	c := testkit.Connect(t, zkAddr, testkit.Unique(t), framework.WithJuteMaxBuffer(4096))
	release := make(chan struct{})
	held := make(chan struct{}, 1)
	var log putLog
	q := queue.New(c, "/q", queue.WithPutListener(func(ev queue.PutEvent) {
		select {
		case held <- struct{}{}:
			<-release // hold the writer while the batch gathers
		default:
		}
		log.listen(ev)
	}))
	t.Cleanup(func() { _ = q.Close(ctx) })
	if err := q.PutAsync(ctx, []byte("first")); err != nil {
		t.Fatal(err)
	}
	<-held
	// Accepted (it fits with the queue's path) but too large with the
	// namespace, the ACL and the request's header: the write refuses it.
	big := make([]byte, 4096-len("/q")-len("queue-")-10)
	for _, item := range [][]byte{[]byte("a"), big, []byte("c")} {
		if err := q.PutAsync(ctx, item); err != nil {
			t.Fatal(err)
		}
	}
	close(release)
	if err := q.Flush(ctx); !errors.Is(err, queue.ErrDataTooLarge) {
		t.Fatalf("Flush: %v, want ErrDataTooLarge", err)
	}
	events := log.all()
	if len(events) != 4 || events[1].Err != nil || !errors.Is(events[2].Err, queue.ErrDataTooLarge) || events[3].Err != nil {
		for i, ev := range events {
			t.Logf("put %d (%d bytes): %q, %v", i, len(ev.Items[0]), ev.Name, ev.Err)
		}
		t.Fatal("want a, c written and the large one refused")
	}
	if n := items(t, c, "/q", "queue-"); len(n) != 3 {
		t.Fatalf("nodes %v, want first, a and c", n)
	}
}
