package framework

import (
	"errors"
	"fmt"
	"testing"
)

// Sync's marker comes after the event of every change committed before
// Sync was called, and Sync returns once the consumer has received it:
// the barrier a cache's read-your-writes rests on.
func TestWatcherSyncMarkerFollowsCommittedChanges(t *testing.T) {
	c := connectNS(t, newNamespace(t))
	other := connectNS(t, c.Namespace())
	ctx := testCtx(t)
	w, err := c.Watch(ctx, "/s", Recursive())
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	const n = 50
	for i := 0; i < n; i++ {
		if _, err := other.Create(ctx, fmt.Sprintf("/s/n%02d", i), nil, CreatingParents()); err != nil {
			t.Fatal(err)
		}
	}
	synced := make(chan error, 1)
	go func() { synced <- w.Sync(ctx) }()
	seen := map[string]bool{}
	evs := collect(t, w, func(ev WatchEvent) bool { return ev.Type == WatchSynced })
	for _, ev := range evs {
		if ev.Type == WatchCreated {
			seen[ev.Path] = true
		}
	}
	for i := 0; i < n; i++ {
		if p := fmt.Sprintf("/s/n%02d", i); !seen[p] {
			t.Fatalf("%s created before Sync, its event not before the marker (%d events)", p, len(evs))
		}
	}
	if err := <-synced; err != nil {
		t.Fatalf("Sync = %v", err)
	}
}

// OneShot serves a Watcher with one-shot watches on a server that has
// persistent ones: its events are the same, Sync says ErrNotPersistent,
// and nothing is left on the server after Close.
func TestWatchOneShotOption(t *testing.T) {
	c := connectNS(t, newNamespace(t))
	other := connectNS(t, c.Namespace())
	ctx := testCtx(t)
	w, err := c.Watch(ctx, "/o", Recursive(), OneShot())
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if w.Persistent() {
		t.Fatal("Persistent() with OneShot")
	}
	if _, err := other.Create(ctx, "/o/a", nil, CreatingParents()); err != nil {
		t.Fatal(err)
	}
	collect(t, w, func(ev WatchEvent) bool { return ev.Type == WatchCreated && ev.Path == "/o/a" })
	if _, err := other.Set(ctx, "/o/a", []byte("x"), -1); err != nil {
		t.Fatal(err)
	}
	expectEvent(t, w, WatchDataChanged, "/o/a")
	if err := w.Sync(ctx); !errors.Is(err, ErrNotPersistent) {
		t.Fatalf("Sync = %v, want ErrNotPersistent", err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	awaitServerWatches(t, server(t).Addr(), c)
}
