package bench

import (
	"context"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"
)

func TestParseCacheTrees(t *testing.T) {
	got, err := ParseCacheTrees("10k, 100000,200k:flat,1M")
	if err != nil {
		t.Fatal(err)
	}
	want := []CacheTree{{Nodes: 10000}, {Nodes: 100000}, {Nodes: 200000, Flat: true}, {Nodes: 1000000}}
	if !slices.Equal(got, want) {
		t.Fatalf("ParseCacheTrees = %+v, want %+v", got, want)
	}
	for _, bad := range []string{"x", "0", "-5", "10kk", "12:deep", "1.5k"} {
		if _, err := ParseCacheTrees(bad); err == nil {
			t.Errorf("ParseCacheTrees(%q) took it", bad)
		}
	}
}

func TestMedianCacheLoads(t *testing.T) {
	rows := []CacheLoadResult{
		{Impl: "a", Tree: "t", Seconds: 3, Nodes: 3},
		{Impl: "a", Tree: "t", Seconds: 1, Nodes: 1},
		{Impl: "a", Tree: "t", Error: "failed"},
		{Impl: "a", Tree: "t", Seconds: 2, Nodes: 2},
	}
	got := MedianCacheLoads(rows)
	if len(got) != 1 || got[0].Seconds != 2 || got[0].Nodes != 2 || !slices.Equal(got[0].RoundsSeconds, []float64{3, 1, 2}) {
		t.Fatalf("MedianCacheLoads = %+v", got)
	}
}

// A process's CPU time is read from /proc, and grows as it works; a pid
// that is not a process reads as unknown.
func TestProcessCPUOf(t *testing.T) {
	before := ProcessCPUOf(os.Getpid())
	for end := time.Now().Add(50 * time.Millisecond); time.Now().Before(end); {
	}
	after := ProcessCPUOf(os.Getpid())
	if before < 0 || after <= before {
		t.Fatalf("own CPU time %v, then %v after spinning: want it read and grown", before, after)
	}
	for _, pid := range []int{0, -1, 1 << 30} {
		if got := ProcessCPUOf(pid); got != -1 {
			t.Errorf("ProcessCPUOf(%d) = %v, want -1", pid, got)
		}
	}
}

// Our cache, the raw reads (the floor) and Curator's load both tree
// shapes whole, and the tree is deleted after.
func TestCacheLoads(t *testing.T) {
	if err := CuratorReady(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, tree := range []CacheTree{{Nodes: 300}, {Nodes: 300, Flat: true}} {
		root := fmt.Sprintf("/cachebench-%d", time.Now().UnixNano())
		if err := BuildCacheTree(ctx, zkAddr, root, tree); err != nil {
			t.Fatal(err)
		}
		for _, load := range []func(context.Context, string, string, CacheTree) (CacheLoadResult, error){LoadOurCache, LoadRawReads, LoadOurCacheOver(3), LoadCuratorCache} {
			r, err := load(ctx, zkAddr, root, tree)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: %+v", tree.Label(), r)
			if r.Nodes != tree.Nodes+1 || r.Seconds <= 0 {
				t.Fatalf("%s: %s loaded %d nodes in %v s, want %d", tree.Label(), r.Impl, r.Nodes, r.Seconds, tree.Nodes+1)
			}
		}
		if err := DeleteTree(ctx, zkAddr, root); err != nil {
			t.Fatal(err)
		}
	}
}

// Our cache as a watch subscriber: one server watch, nothing left.
func TestRunWatchOurCache(t *testing.T) {
	if r := runWatchSmall(t, WatchOursCache); r.WatchedPaths != 1 {
		t.Fatalf("cache: %d watched paths, want 1", r.WatchedPaths)
	}
}

func TestLogProblems(t *testing.T) {
	log := `12:00:00.001 [main] INFO org.x.Y - started
12:00:01.000 [main-EventThread] ERROR org.apache.curator.framework.recipes.cache.CuratorCacheImpl - CuratorCache error
org.apache.zookeeper.KeeperException$ConnectionLossException: KeeperErrorCode = ConnectionLoss for /a
	at org.apache.zookeeper.KeeperException.create(KeeperException.java:102)
12:00:01.002 [main-EventThread] ERROR org.apache.curator.framework.recipes.cache.CuratorCacheImpl - CuratorCache error
org.apache.zookeeper.KeeperException$ConnectionLossException: KeeperErrorCode = ConnectionLoss for /a
12:00:02.000 [main] WARN org.x.Z - slow
12:00:03.000 [main] ERROR org.x.Z - third
`
	want := "[main-EventThread] ERROR org.apache.curator.framework.recipes.cache.CuratorCacheImpl - CuratorCache error: " +
		"org.apache.zookeeper.KeeperException$ConnectionLossException: KeeperErrorCode = ConnectionLoss for /a | [main] WARN org.x.Z - slow"
	if got := logProblems(log, 2); got != want {
		t.Fatalf("logProblems:\n got %s\nwant %s", got, want)
	}
	if got := logProblems("12:00:00.001 [main] INFO started\n", 3); got != "" {
		t.Fatalf("logProblems of a clean log = %q", got)
	}
}
