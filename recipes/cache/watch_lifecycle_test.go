package cache_test

import (
	"context"
	"errors"
	"testing"

	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/cache"
)

// The lifecycle table: every order of Start, Close and use gives a
// documented result, and each leaves no server watch (wchc) and, at the
// package's end, no goroutine (goleak), in both watch modes.
func TestLifecycleTable(t *testing.T) {
	t.Parallel()
	type step func(t *testing.T, ctx context.Context, ch *cache.Cache)
	start := func(want error) step {
		return func(t *testing.T, ctx context.Context, ch *cache.Cache) {
			t.Helper()
			if err := ch.Start(ctx); !errors.Is(err, want) || (want == nil) != (err == nil) {
				t.Fatalf("Start = %v, want %v", err, want)
			}
		}
	}
	closeIt := func(t *testing.T, _ context.Context, ch *cache.Cache) {
		t.Helper()
		if err := ch.Close(); err != nil {
			t.Fatalf("Close = %v", err)
		}
	}
	failedStart := func(t *testing.T, ctx context.Context, ch *cache.Cache) {
		t.Helper()
		dead, cancel := context.WithCancel(ctx)
		cancel()
		if err := ch.Start(dead); !errors.Is(err, context.Canceled) {
			t.Fatalf("Start with an ended ctx = %v, want context.Canceled", err)
		}
	}
	synced := func(want error) step {
		return func(t *testing.T, ctx context.Context, ch *cache.Cache) {
			t.Helper()
			if err := ch.Synced(ctx); !errors.Is(err, want) || (want == nil) != (err == nil) {
				t.Fatalf("Synced = %v, want %v", err, want)
			}
		}
	}
	loaded := func(t *testing.T, _ context.Context, ch *cache.Cache) {
		t.Helper()
		// The cached nodes stay readable after Close.
		if _, ok := ch.Get("/lc/a"); !ok || ch.Len() != 2 || len(ch.Children("/lc")) != 1 {
			t.Fatalf("Get/Len/Children: Len %d, Children %v", ch.Len(), ch.Children("/lc"))
		}
	}
	empty := func(t *testing.T, _ context.Context, ch *cache.Cache) {
		t.Helper()
		if _, ok := ch.Get("/lc/a"); ok || ch.Len() != 0 || ch.Children("/lc") != nil {
			t.Fatalf("a cache never loaded holds Len %d", ch.Len())
		}
	}
	listenInert := func(t *testing.T, _ context.Context, ch *cache.Cache) {
		t.Helper()
		heard := make(chan cache.Event, 1)
		cancel := ch.Listen(func(ev cache.Event) { heard <- ev })
		cancel()
		cancel() // idempotent
		select {
		case ev := <-heard:
			t.Fatalf("a listener of a closed cache heard %v", ev)
		default:
		}
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"start twice", []step{start(nil), start(cache.ErrStarted), synced(nil), closeIt}},
		{"close twice", []step{start(nil), closeIt, closeIt}},
		{"close before start", []step{closeIt, start(cache.ErrClosed), synced(cache.ErrClosed), empty, listenInert}},
		{"use after close", []step{start(nil), closeIt, loaded, synced(cache.ErrClosed), listenInert}},
		{"start after close", []step{start(nil), closeIt, start(cache.ErrClosed)}},
		{"failed start then close", []step{failedStart, synced(cache.ErrNotStarted), empty, closeIt, start(cache.ErrClosed)}},
		{"failed start then start", []step{failedStart, start(nil), loaded, closeIt}},
		{"synced before start", []step{synced(cache.ErrNotStarted), closeIt}},
	}
	for _, mode := range []struct {
		name string
		opts []cache.Option
	}{{"persistent", nil}, {"one-shot", []cache.Option{cache.OneShotWatches()}}} {
		for _, tt := range tests {
			t.Run(mode.name+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				ns := testkit.Unique(t)
				ctx := testkit.Ctx(t)
				c := testkit.Connect(t, zkAddr, ns)
				mustCreate(t, ctx, c, "/lc/a", "a")
				ch := cache.New(c, "/lc", mode.opts...)
				defer ch.Close()
				for _, s := range tt.steps {
					s(t, ctx, ch)
				}
				_ = ch.Close()
				testkit.AwaitWatchCount(t, zkAddr, 0, c)
			})
		}
	}
}

// Close while Start is loading: Start returns ErrClosed and nothing is
// left, and a concurrent second Start is refused with ErrStarted.
func TestCloseDuringStart(t *testing.T) {
	t.Parallel()
	ns := testkit.Unique(t)
	ctx := testkit.Ctx(t)
	c := testkit.Connect(t, zkAddr, ns)
	mustCreate(t, ctx, c, "/lc/a", "a")
	ch := cache.New(c, "/lc")
	blocked := make(chan struct{})
	release := make(chan struct{})
	first := true
	// The listener holds the first Created; Start does not wait for
	// listeners, so this only orders Close after the load began.
	defer ch.Listen(func(cache.Event) {
		if first {
			first = false
			close(blocked)
			<-release
		}
	})()
	done := make(chan error, 1)
	go func() { done <- ch.Start(ctx) }()
	testkit.WaitClosed(t, blocked, "the load's first event")
	if err := ch.Start(ctx); !errors.Is(err, cache.ErrStarted) && !errors.Is(err, cache.ErrClosed) {
		t.Fatalf("a second Start = %v, want ErrStarted", err)
	}
	close(release)
	closed := make(chan struct{})
	go func() { _ = ch.Close(); close(closed) }()
	testkit.WaitClosed(t, closed, "Close")
	if err := <-done; err != nil && !errors.Is(err, cache.ErrClosed) {
		t.Fatalf("Start racing Close = %v", err)
	}
	testkit.AwaitWatchCount(t, zkAddr, 0, c)
}
