package bench

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"
)

func TestMedianWatch(t *testing.T) {
	rows := []WatchResult{
		{Subscriber: "a", RTTMs: 2, P50Ms: 3, P99Ms: 9, ChangesPerSec: 100, Delivered: 10},
		{Subscriber: "b", RTTMs: 2, P50Ms: 1},
		{Subscriber: "a", RTTMs: 2, P50Ms: 1, P99Ms: 7, ChangesPerSec: 300, Delivered: 30},
		{Subscriber: "a", RTTMs: 2, P50Ms: 2, P99Ms: 8, ChangesPerSec: 200, Delivered: 20},
		{Subscriber: "a", RTTMs: 2, Error: "failed"},
	}
	got := MedianWatch(rows)
	if len(got) != 2 || got[0].Subscriber != "a" || got[1].Subscriber != "b" {
		t.Fatalf("MedianWatch = %+v", got)
	}
	a := got[0]
	if a.P50Ms != 2 || a.P99Ms != 8 || a.ChangesPerSec != 200 || a.Delivered != 20 {
		t.Fatalf("median row %+v: want p50 2, p99 8, 200 changes/s, 20 delivered", a)
	}
	if !slices.Equal(a.RoundsP50Ms, []float64{3, 1, 2}) {
		t.Fatalf("rounds %v, want every good round in run order", a.RoundsP50Ms)
	}
	if len(got[1].RoundsP50Ms) != 0 {
		t.Fatalf("one round kept rounds %v", got[1].RoundsP50Ms)
	}
}

// runWatchSmall runs sub on a small tree and checks the row's sanity and
// that nothing is left on the server.
func runWatchSmall(t *testing.T, sub string) WatchResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cfg := WatchConfig{Servers: zkAddr, Server: zkAddr, Root: fmt.Sprintf("/watchbench-%d", time.Now().UnixNano()),
		Tree: 20, Samples: 10, Burst: 100, Writers: 8}
	r, err := RunWatch(ctx, cfg, sub, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", r)
	if r.Samples != 10 || r.P50Ms <= 0 || r.P99Ms < r.P50Ms || r.Burst != 100 || r.Delivered < 1 || r.Delivered > 100 ||
		r.ChangesPerSec <= 0 || r.WriterPerSec <= 0 || r.TreeNodes != 22 {
		t.Fatalf("implausible row %+v", r)
	}
	if r.WatchesLeft != 0 {
		t.Fatalf("%d server watches left after %s closed", r.WatchesLeft, sub)
	}
	conn, err := DialZK(ctx, zkAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if ok, _, err := conn.Exists(cfg.Root); err != nil || ok {
		t.Fatalf("%s left behind (exists %v, %v)", cfg.Root, ok, err)
	}
	return r
}

// Our subscribers hold one server watch whatever the tree's size, and
// every data change of the timed writes reaches them.
func TestRunWatchOurs(t *testing.T) {
	for _, sub := range []string{WatchOursRecursive, WatchOursNode} {
		t.Run(sub, func(t *testing.T) {
			if r := runWatchSmall(t, sub); r.WatchedPaths != 1 || r.WatchEntries < 1 || r.WatchEntries > 2 {
				t.Fatalf("%s: %d watched paths, %d watch entries: want 1 persistent watch", sub, r.WatchedPaths, r.WatchEntries)
			}
		})
	}
}

// Curator's persistent watch holds one server watch (and its client one on
// /zookeeper/config); its TreeCache one per node in the data table and one
// per node in the child table.
func TestRunWatchCurator(t *testing.T) {
	if err := CuratorReady(); err != nil {
		t.Fatal(err)
	}
	r := runWatchSmall(t, WatchCuratorRecursive)
	if r.WatchedPaths > 2 || r.Delivered != int64(r.Burst) {
		t.Fatalf("persistent recursive: %d watched paths, %d of %d delivered", r.WatchedPaths, r.Delivered, r.Burst)
	}
	r = runWatchSmall(t, WatchCuratorTreeCache)
	if r.WatchedPaths < r.TreeNodes || r.WatchEntries < 2*r.TreeNodes {
		t.Fatalf("TreeCache on %d nodes: %d watched paths, %d watch entries: want one data and one child watch per node",
			r.TreeNodes, r.WatchedPaths, r.WatchEntries)
	}
}
