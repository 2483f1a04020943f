package leader_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/leader"
)

// Run requeues after fn returns nil, resigns and returns fn's error while
// the term is live, and leaves nothing behind.
func TestRunRequeuesAndReturnsErrors(t *testing.T) {
	t.Parallel()
	ns := testkit.Unique(t)
	ctx := testkit.Ctx(t)
	c := testkit.Connect(t, zkAddr, ns)
	e := leader.New(c, "/e")
	var tokens []int64
	boom := errors.New("boom")
	err := e.Run(ctx, func(ctx context.Context) error {
		term := leader.FromContext(ctx)
		if term == nil || term.Err() != nil {
			t.Error("fn without a live term")
			return boom
		}
		tokens = append(tokens, term.Token())
		if len(tokens) < 3 {
			return nil // requeue
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Run = %v, want fn's error", err)
	}
	if len(tokens) != 3 || tokens[0] >= tokens[1] || tokens[1] >= tokens[2] {
		t.Fatalf("tokens %v: want 3, increasing", tokens)
	}
	if n := testkit.Children(t, c, "/e"); len(n) != 0 {
		t.Fatalf("nodes left: %v", n)
	}
}

// With RequeueOnError, Run is Curator's LeaderSelector with autoRequeue
// when takeLeadership throws: fn's error is logged at Warn, the term
// resigned and a new one campaigned for after a growing pause, and Run
// keeps going until its ctx ends (without the option it returns fn's error:
// TestRunRequeuesAndReturnsErrors).
func TestRunRequeueOnErrorCampaignsAgain(t *testing.T) {
	t.Parallel()
	ns := testkit.Unique(t)
	ctx, cancel := context.WithCancel(testkit.Ctx(t))
	defer cancel()
	c := testkit.Connect(t, zkAddr, ns)
	core, logs := observer.New(zap.DebugLevel)
	e := leader.New(c, "/e", leader.WithID("p1"), leader.RequeueOnError(),
		leader.WithLogger(zap.New(core).Named("scheduler")))
	boom := errors.New("boom")
	var tokens []int64
	fourth := make(chan struct{})
	ran := make(chan error, 1)
	go func() {
		ran <- e.Run(ctx, func(ctx context.Context) error {
			term := leader.FromContext(ctx)
			if term == nil || term.Err() != nil {
				t.Error("fn without a live term")
				return nil
			}
			tokens = append(tokens, term.Token())
			if len(tokens) <= 3 {
				return boom
			}
			close(fourth)
			<-ctx.Done()
			return ctx.Err()
		})
	}()
	select {
	case <-fourth:
	case err := <-ran:
		t.Fatalf("Run returned %v after %d terms, want it to campaign again", err, len(tokens))
	case <-time.After(testkit.Deadline):
		t.Fatalf("no fourth term; tokens %v", tokens)
	}
	cancelRun(t, cancel, ran)
	// fn ran for the last time before Run returned: tokens is ours now.
	if len(tokens) != 4 || tokens[0] >= tokens[1] || tokens[1] >= tokens[2] || tokens[2] >= tokens[3] {
		t.Fatalf("tokens %v: want 4, increasing", tokens)
	}
	warned := logs.FilterMessage("leader function failed; campaigning again").All()
	if len(warned) != 3 {
		t.Fatalf("%d warnings, want one per failure (3)", len(warned))
	}
	for i, w := range warned {
		f := w.ContextMap()
		want := requeuePauses[i]
		if w.Level != zap.WarnLevel || w.LoggerName != "scheduler" || f["error"] != "boom" ||
			f["token"] != tokens[i] || f["path"] != "/e" || f["pause"] != want {
			t.Errorf("warning %d: %v %q %v, want warn from scheduler, error boom, token %d, pause %v",
				i, w.Level, w.LoggerName, f, tokens[i], want)
		}
	}
	if n := testkit.Children(t, c, "/e"); len(n) != 0 {
		t.Fatalf("nodes left: %v", n)
	}
}

// requeuePauses are Run's first pauses: 50 ms, doubling.
var requeuePauses = []time.Duration{50 * time.Millisecond, 100 * time.Millisecond, 200 * time.Millisecond}

// Observe reports every change in order, "no leader" included, to a
// reader that reads late.
func TestObserveOrderedWithNoLeader(t *testing.T) {
	t.Parallel()
	ns := testkit.Unique(t)
	ctx, cancel := context.WithCancel(testkit.Ctx(t))
	defer cancel()
	c1 := testkit.Connect(t, zkAddr, ns)
	c2 := testkit.Connect(t, zkAddr, ns)
	e1 := leader.New(c1, "/e", leader.WithID("one"))
	e2 := leader.New(c2, "/e", leader.WithID("two"))
	events := e1.Observe(ctx)
	if ev := await(t, events, "first event"); !ev.NoLeader() {
		t.Fatalf("first event %+v, want no leader", ev)
	}
	t1, err := e1.Campaign(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if ev := await(t, events, "leader one"); ev.Leader.ID != "one" || ev.Token != t1.Token() || !ev.Leader.IsLeader {
		t.Fatalf("event %+v, want one with token %d", ev, t1.Token())
	}
	next := campaign(ctx, e2)
	testkit.Eventually(t, "two queued", func() bool { return len(testkit.Children(t, c1, "/e")) == 2 })
	if err := t1.Resign(ctx); err != nil {
		t.Fatal(err)
	}
	r := await(t, next, "two's term")
	if r.err != nil {
		t.Fatal(r.err)
	}
	if err := r.term.Resign(ctx); err != nil {
		t.Fatal(err)
	}
	// Read only now: nothing was dropped meanwhile, though the reader was
	// late; a watch may coalesce, but what is seen comes in order.
	var got []string
	for len(got) == 0 || got[len(got)-1] != "" {
		ev := await(t, events, "events after the hand-over")
		got = append(got, ev.Leader.ID)
	}
	if got[0] != "two" && got[0] != "" {
		t.Fatalf("events %q: want two, then no leader", got)
	}
	cancel()
	for range events { // closed once ctx ends
	}
}

// Run returns once its ctx ends when fn waits on its own context, the
// usual Go shape: fn's context ends with Run's as well as with the term
// (before the fix it ended only with the term, and Run never returned).
// The node is gone when Run returns, and fn's context still carries the
// term and Run's values.
func TestRunReturnsWhenCtxEndsAndFnWaitsOnItsContext(t *testing.T) {
	t.Parallel()
	ns := testkit.Unique(t)
	type key struct{}
	ctx, cancel := context.WithCancel(context.WithValue(testkit.Ctx(t), key{}, "v"))
	defer cancel()
	c := testkit.Connect(t, zkAddr, ns)
	e := leader.New(c, "/e")
	leading := make(chan *leader.Term, 1)
	ran := make(chan error, 1)
	go func() {
		ran <- e.Run(ctx, func(fctx context.Context) error {
			if fctx.Value(key{}) != "v" {
				t.Error("fn's context lost Run's values")
			}
			leading <- leader.FromContext(fctx)
			<-fctx.Done()
			return nil
		})
	}()
	var term *leader.Term
	select {
	case term = <-leading:
	case err := <-ran:
		t.Fatalf("Run returned %v before leading", err)
	case <-time.After(testkit.Deadline):
		t.Fatal("never led")
	}
	if term == nil || term.Err() != nil {
		t.Fatalf("fn's context has no live term: %v", term)
	}
	cancelRun(t, cancel, ran)
	if !errors.Is(term.Err(), leader.ErrResigned) {
		t.Fatalf("term.Err = %v, want ErrResigned", term.Err())
	}
	if n := testkit.Children(t, c, "/e"); len(n) != 0 {
		t.Fatalf("nodes left: %v", n)
	}
}

// cancelRun cancels Run's ctx and waits for Run to return context.Canceled.
func cancelRun(t *testing.T, cancel context.CancelFunc, ran <-chan error) {
	t.Helper()
	cancel()
	select {
	case err := <-ran:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Run = %v, want context.Canceled", err)
		}
	case <-time.After(testkit.Deadline):
		t.Fatal("Run did not return after its ctx was cancelled")
	}
}
