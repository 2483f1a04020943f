package queue_test

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/curatorjava"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/queue"
)

// testSharder is a started Sharder whose threshold checks the test runs
// (its clock), and the channel told of each check's end.
type testSharder struct {
	*queue.Sharder
	clk    *fakeClock
	checks chan struct{}
}

func startSharder(t *testing.T, c *framework.Client, path, leaderPath string, opts ...queue.SharderOption) *testSharder {
	t.Helper()
	s := &testSharder{
		Sharder: queue.NewSharder(c, path, leaderPath, append([]queue.SharderOption{queue.WithThresholdCheck(time.Hour)}, opts...)...),
		clk:     newFakeClock(time.Now()),
		checks:  make(chan struct{}, 100),
	}
	queue.SetSharderClock(s.Sharder, s.clk)
	queue.OnCheck(s.Sharder, func() { s.checks <- struct{}{} })
	if err := s.Start(testkit.Ctx(t)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), testkit.Deadline)
		defer cancel()
		if err := s.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

// check runs one threshold check: it moves the clock past the period once
// the sharder waits for it, and waits for the check's end.
func (s *testSharder) check(t *testing.T) {
	t.Helper()
	testkit.Eventually(t, "the sharder waiting for its next check", func() bool {
		s.clk.mu.Lock()
		defer s.clk.mu.Unlock()
		return len(s.clk.timers) > 0
	})
	s.clk.set(s.clk.Now().Add(time.Hour))
	select {
	case <-s.checks:
	case <-time.After(testkit.Deadline):
		t.Fatal("no threshold check")
	}
}

// fill puts n items into the shard at p.
func fill(t *testing.T, c *framework.Client, p string, n int) {
	t.Helper()
	q := queue.New(c, p)
	for i := range n {
		if err := q.Put(testkit.Ctx(t), []byte(fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
	}
}

// shardNames lists the shards under p as ZooKeeper has them: every child.
func shardNames(t *testing.T, c *framework.Client, p string) []string {
	t.Helper()
	out := testkit.Children(t, c, p)
	slices.Sort(out)
	return out
}

// Start on an empty path makes one shard named "queue-<UUID>", as
// Curator's does, under a path made for it; and of several sharders
// started at once on an empty path one makes it (Curator's each make one).
func TestSharderStartMakesOneShard(t *testing.T) {
	t.Parallel()
	c := testkit.Connect(t, zkAddr, testkit.Unique(t))
	var wg sync.WaitGroup
	ss := make([]*queue.Sharder, 4)
	for i := range ss {
		ss[i] = queue.NewSharder(c, "/jobs", "/jobs-leader")
		t.Cleanup(func() {
			if err := ss[i].Close(testkit.Ctx(t)); err != nil {
				t.Error(err)
			}
		})
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := ss[i].Start(testkit.Ctx(t)); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	names := shardNames(t, c, "/jobs")
	if len(names) != 1 {
		t.Fatalf("shards %v, want one", names)
	}
	id, ok := strings.CutPrefix(names[0], "queue-")
	if !ok || len(id) != 36 || strings.Count(id, "-") != 4 {
		t.Fatalf("shard %q, want queue-<UUID>", names[0])
	}
	for _, s := range ss {
		if got := s.ShardPaths(); !slices.Equal(got, []string{"/jobs/" + names[0]}) {
			t.Fatalf("ShardPaths %v, want [/jobs/%s]", got, names[0])
		}
	}
}

// A shard at the threshold makes the leader add one at its next check, and
// no more once there are WithMaxQueues; a shard at or under half the
// threshold is where Put goes.
func TestSharderThresholdAddsShard(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t)
	c := testkit.Connect(t, zkAddr, testkit.Unique(t))
	s := startSharder(t, c, "/jobs", "/leader", queue.WithNewQueueThreshold(4), queue.WithMaxQueues(2))
	testkit.Eventually(t, "the sharder leading", func() bool { return queue.Leads(s.Sharder) })
	first := s.ShardPaths()[0]
	fill(t, c, first, 3)
	s.check(t)
	if n := len(shardNames(t, c, "/jobs")); n != 1 {
		t.Fatalf("%d shards under the threshold, want 1", n)
	}
	fill(t, c, first, 1)
	s.check(t)
	names := shardNames(t, c, "/jobs")
	if len(names) != 2 || s.ShardCount() != 2 {
		t.Fatalf("shards %v (sharder: %d) past the threshold, want 2", names, s.ShardCount())
	}
	// The full shard is no longer preferred: every Put goes to the new one.
	for range 10 {
		if err := s.Put(ctx, []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(items(t, c, first, "queue-")); n != 4 {
		t.Fatalf("%d items in the full shard, want 4 (Put went there)", n)
	}
	// Both shards are past the threshold now; the maximum is reached.
	s.check(t)
	if n := len(shardNames(t, c, "/jobs")); n != 2 {
		t.Fatalf("%d shards, want the maximum 2", n)
	}
}

// Only the leader adds a shard, once per crossing, and a new leader adds
// none while no shard is past the threshold: no duplicates at a leader
// change.
func TestSharderLeaderChangeAddsNoDuplicate(t *testing.T) {
	t.Parallel()
	ns := testkit.Unique(t)
	c1 := testkit.Connect(t, zkAddr, ns)
	c2 := testkit.Connect(t, zkAddr, ns)
	a := startSharder(t, c1, "/jobs", "/leader", queue.WithNewQueueThreshold(2))
	b := startSharder(t, c2, "/jobs", "/leader", queue.WithNewQueueThreshold(2))
	testkit.Eventually(t, "one sharder leading", func() bool { return queue.Leads(a.Sharder) || queue.Leads(b.Sharder) })
	lead, other := a, b
	if queue.Leads(b.Sharder) {
		lead, other = b, a
	}
	if queue.Leads(other.Sharder) {
		t.Fatal("both sharders lead")
	}
	first := lead.ShardPaths()[0]
	fill(t, c1, first, 2)
	other.check(t)
	if n := len(shardNames(t, c1, "/jobs")); n != 1 {
		t.Fatalf("%d shards after the follower's check, want 1", n)
	}
	lead.check(t)
	other.check(t)
	names := shardNames(t, c1, "/jobs")
	if len(names) != 2 {
		t.Fatalf("shards %v after both checks, want 2", names)
	}
	testkit.Eventually(t, "the follower knowing the new shard", func() bool { return other.ShardCount() == 2 })

	// The items are consumed; the leader goes; the new leader checks.
	for _, n := range items(t, c1, first, "queue-") {
		if err := c1.Delete(testkit.Ctx(t), first+"/"+n); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), testkit.Deadline)
	defer cancel()
	if err := lead.Close(ctx); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, "the other sharder leading", func() bool { return queue.Leads(other.Sharder) })
	other.check(t)
	if got := shardNames(t, c2, "/jobs"); !slices.Equal(got, names) {
		t.Fatalf("shards %v after the leader change, want %v", got, names)
	}
}

// A leader deposed between its decision and its write adds no shard: the
// shard is made behind its term's fence (its latch node must exist). Here
// its latch node is deleted by another client at that very moment, before
// the leader has heard of it.
func TestSharderDeposedLeaderAddsNoShard(t *testing.T) {
	t.Parallel()
	ns := testkit.Unique(t)
	c := testkit.Connect(t, zkAddr, ns)
	other := testkit.Connect(t, zkAddr, ns)
	var depose atomic.Bool
	depose.Store(true)
	s := &testSharder{
		Sharder: queue.NewSharder(c, "/jobs", "/leader", queue.WithThresholdCheck(time.Hour), queue.WithNewQueueThreshold(1)),
		clk:     newFakeClock(time.Now()),
		checks:  make(chan struct{}, 100),
	}
	queue.SetSharderClock(s.Sharder, s.clk)
	queue.OnCheck(s.Sharder, func() { s.checks <- struct{}{} })
	queue.BeforeAdd(s.Sharder, func() {
		if !depose.Load() {
			return
		}
		for _, n := range testkit.Children(t, other, "/leader") {
			if err := other.Delete(testkit.Ctx(t), "/leader/"+n); err != nil {
				t.Error(err)
			}
		}
	})
	if err := s.Start(testkit.Ctx(t)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(testkit.Ctx(t)); err != nil {
			t.Error(err)
		}
	})
	testkit.Eventually(t, "the sharder leading", func() bool { return queue.Leads(s.Sharder) })
	fill(t, c, s.ShardPaths()[0], 1)
	s.check(t)
	if names := shardNames(t, c, "/jobs"); len(names) != 1 {
		t.Fatalf("shards %v after a deposed leader's check, want 1", names)
	}
	// It leads again (a new node), and its next check adds the shard.
	depose.Store(false)
	testkit.Eventually(t, "the sharder leading again", func() bool {
		return queue.Leads(s.Sharder) && len(testkit.Children(t, other, "/leader")) == 1
	})
	s.check(t)
	if names := shardNames(t, c, "/jobs"); len(names) != 2 {
		t.Fatalf("shards %v after the leader's check, want 2", names)
	}
}

// Consume takes the items of every shard, of one found at Start and of one
// added while it runs.
func TestSharderConsumesAllShards(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t)
	c := testkit.Connect(t, zkAddr, testkit.Unique(t))
	fill(t, c, "/jobs/queue-a", 3)
	fill(t, c, "/jobs/queue-b", 3)
	s := startSharder(t, c, "/jobs", "/leader")
	if got := s.ShardPaths(); !slices.Equal(got, []string{"/jobs/queue-a", "/jobs/queue-b"}) {
		t.Fatalf("ShardPaths %v", got)
	}
	for i := range 4 {
		if err := s.Put(ctx, []byte(fmt.Sprint("put", i))); err != nil {
			t.Fatal(err)
		}
	}
	k := consume(t, s, nil)
	got := map[string]int{}
	for range 10 {
		it := k.next(t)
		got[string(it.Data)]++
	}
	// A shard made by another process while Consume runs.
	fill(t, c, "/jobs/queue-c", 2)
	for range 2 {
		it := k.next(t)
		got["c"+string(it.Data)]++
	}
	want := map[string]int{"0": 2, "1": 2, "2": 2, "put0": 1, "put1": 1, "put2": 1, "put3": 1, "c0": 1, "c1": 1}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("consumed %v, want %v", got, want)
	}
	for _, p := range []string{"/jobs/queue-a", "/jobs/queue-b", "/jobs/queue-c"} {
		if n := items(t, c, p, "queue-"); len(n) != 0 {
			t.Fatalf("%s still holds %v", p, n)
		}
	}
}

// Close ends Consume with ErrClosed, deletes the sharder's latch node and
// no shard; calls after it fail with ErrClosed, calls before Start with
// ErrNotStarted.
func TestSharderLifecycle(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t)
	c := testkit.Connect(t, zkAddr, testkit.Unique(t))
	s := queue.NewSharder(c, "/jobs", "/leader")
	if _, err := s.Queue(); !errors.Is(err, queue.ErrNotStarted) {
		t.Fatalf("Queue before Start: %v, want ErrNotStarted", err)
	}
	if err := s.Consume(ctx, func(context.Context, queue.Item) error { return nil }); !errors.Is(err, queue.ErrNotStarted) {
		t.Fatalf("Consume before Start: %v, want ErrNotStarted", err)
	}
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Start(ctx); !errors.Is(err, queue.ErrInvalidOption) {
		t.Fatalf("second Start: %v, want ErrInvalidOption", err)
	}
	errc := make(chan error, 1)
	go func() { errc <- s.Consume(ctx, func(context.Context, queue.Item) error { return nil }) }()
	testkit.Eventually(t, "the latch node made", func() bool { return len(testkit.Children(t, c, "/leader")) == 1 })
	testkit.AwaitWatch(t, zkAddr, c, s.ShardPaths()[0])
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-errc:
		if !errors.Is(err, queue.ErrClosed) {
			t.Fatalf("Consume after Close: %v, want ErrClosed", err)
		}
	case <-time.After(testkit.Deadline):
		t.Fatal("Consume still running after Close")
	}
	if n := testkit.Children(t, c, "/leader"); len(n) != 0 {
		t.Fatalf("latch nodes %v after Close", n)
	}
	if n := shardNames(t, c, "/jobs"); len(n) != 1 {
		t.Fatalf("shards %v after Close, want the one", n)
	}
	if err := s.Put(ctx, []byte("x")); !errors.Is(err, queue.ErrClosed) {
		t.Fatalf("Put after Close: %v, want ErrClosed", err)
	}
	if err := s.Close(ctx); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

// Bad input is refused before anything is written.
func TestSharderBadInput(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t)
	c := testkit.Connect(t, zkAddr, testkit.Unique(t))
	var nilCtx context.Context
	tests := []struct {
		name string
		s    *queue.Sharder
		ctx  context.Context
		want error
	}{
		{"nil client", queue.NewSharder(nil, "/q", "/l"), ctx, queue.ErrNilClient},
		{"bad path", queue.NewSharder(c, "q", "/l"), ctx, queue.ErrInvalidPath},
		{"root", queue.NewSharder(c, "/", "/l"), ctx, queue.ErrInvalidPath},
		{"bad leader path", queue.NewSharder(c, "/q", "/l/"), ctx, queue.ErrInvalidPath},
		{"leader path is the path", queue.NewSharder(c, "/q", "/q"), ctx, queue.ErrInvalidPath},
		{"leader path under the path", queue.NewSharder(c, "/q", "/q/leader"), ctx, queue.ErrInvalidPath},
		{"threshold 0", queue.NewSharder(c, "/q", "/l", queue.WithNewQueueThreshold(0)), ctx, queue.ErrInvalidOption},
		{"check 0", queue.NewSharder(c, "/q", "/l", queue.WithThresholdCheck(0)), ctx, queue.ErrInvalidOption},
		{"max 0", queue.NewSharder(c, "/q", "/l", queue.WithMaxQueues(0)), ctx, queue.ErrInvalidOption},
		{"nil shard options", queue.NewSharder(c, "/q", "/l", queue.WithShardOptions(nil)), ctx, queue.ErrInvalidOption},
		{"nil option", queue.NewSharder(c, "/q", "/l", nil), ctx, queue.ErrInvalidOption},
		{"nil ctx", queue.NewSharder(c, "/q", "/l"), nilCtx, queue.ErrInvalidOption},
		{"nil handle", nil, ctx, queue.ErrNilHandle},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.s.Start(tt.ctx); !errors.Is(err, tt.want) {
				t.Fatalf("Start: %v, want %v", err, tt.want)
			}
			if err := tt.s.Close(ctx); tt.want == queue.ErrNilHandle != errors.Is(err, queue.ErrNilHandle) {
				t.Fatalf("Close: %v", err)
			}
		})
	}
	if st, err := c.Exists(ctx, "/q"); err != nil || st != nil {
		t.Fatalf("/q after refused starts: %v, %v", st, err)
	}
}

// WithShardOptions gives each shard its own options: here a lock path
// beside the shard, so that item names, which repeat across shards, lock
// apart.
func TestSharderShardOptions(t *testing.T) {
	t.Parallel()
	c := testkit.Connect(t, zkAddr, testkit.Unique(t))
	fill(t, c, "/jobs/queue-a", 1)
	fill(t, c, "/jobs/queue-b", 1)
	s := startSharder(t, c, "/jobs", "/leader", queue.WithShardOptions(func(p string) []queue.Option {
		return []queue.Option{queue.WithLockPath("/locks/" + path.Base(p))}
	}))
	hold := make(chan struct{})
	k := consume(t, s, func(ctx context.Context, it queue.Item) error {
		<-hold
		return nil
	})
	k.next(t)
	k.next(t)
	if got := testkit.Children(t, c, "/locks"); !slices.Equal(sortedCopy(got), []string{"queue-a", "queue-b"}) {
		t.Fatalf("lock dirs %v", got)
	}
	close(hold)
	testkit.Eventually(t, "the items consumed", func() bool {
		return len(items(t, c, "/jobs/queue-a", "queue-"))+len(items(t, c, "/jobs/queue-b", "queue-")) == 0
	})
}

func sortedCopy(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// Curator 5.4's QueueSharder and ours on one path share its shards: each
// finds the other's, each one's leader adds a shard the other then uses,
// and items put by either are consumed by the other.
func TestInteropSharder(t *testing.T) {
	t.Parallel()
	base := "/interop/" + testkit.Unique(t)
	jobs, lead := base+"/jobs", base+"/leader"
	java := curatorjava.StartDriver(t, zkAddr)
	c := testkit.Connect(t, zkAddr, "")
	ctx := testkit.Ctx(t)
	javaPaths := func(id string) []string { return strings.Split(java.MustDo("qspaths "+id), ",") }

	// Java first: it makes the first shard and leads; its checks run
	// every 100 ms and add a shard at 3 items, up to 2.
	java.MustDo(fmt.Sprintf("qsharder j %s %s 3 100 2 -", jobs, lead))
	t.Cleanup(func() { _, _ = java.Do("qsclose j") })
	first := javaPaths("j")
	if len(first) != 1 || !strings.HasPrefix(path.Base(first[0]), "queue-") {
		t.Fatalf("Java's shards %v", first)
	}
	testkit.Eventually(t, "Java's latch node", func() bool { return len(testkit.Children(t, c, lead)) == 1 })
	s := startSharder(t, c, jobs, lead, queue.WithNewQueueThreshold(3))
	if got := s.ShardPaths(); !slices.Equal(got, first) {
		t.Fatalf("Go sees shards %v, Java made %v", got, first)
	}
	testkit.Eventually(t, "Go's latch node", func() bool { return len(testkit.Children(t, c, lead)) == 2 })
	if queue.Leads(s.Sharder) {
		t.Fatal("the Go sharder leads while the Java one, first, does")
	}

	// Go fills the shard; Java's leader adds one; Go finds it.
	for i := range 3 {
		if err := s.Put(ctx, []byte(fmt.Sprint("go", i))); err != nil {
			t.Fatal(err)
		}
	}
	testkit.Eventually(t, "Go finding Java's new shard", func() bool { return s.ShardCount() == 2 })
	if got, want := s.ShardPaths(), javaPaths("j"); !slices.Equal(got, want) {
		t.Fatalf("Go sees shards %v, Java %v", got, want)
	}

	// Java puts (into the new shard, the full one is not preferred); Go
	// consumes everything, in both shards.
	for i := range 3 {
		java.MustDo(fmt.Sprintf("qsput j %s", b64([]byte(fmt.Sprint("java", i)))))
	}
	k := consume(t, s, nil)
	var got []string
	for range 6 {
		got = append(got, string(k.next(t).Data))
	}
	slices.Sort(got)
	if want := []string{"go0", "go1", "go2", "java0", "java1", "java2"}; !slices.Equal(got, want) {
		t.Fatalf("Go consumed %v, want %v", got, want)
	}
	k.stop()

	// Java goes, Go leads, fills a shard and adds one.
	java.MustDo("qsclose j")
	testkit.Eventually(t, "Go leading", func() bool { return queue.Leads(s.Sharder) })
	fill(t, c, first[0], 3)
	s.check(t)
	three := s.ShardPaths()
	if len(three) != 3 || !slices.Equal(shardNames(t, c, jobs), []string{path.Base(three[0]), path.Base(three[1]), path.Base(three[2])}) {
		t.Fatalf("shards %v after Go's check, want 3", three)
	}

	// A Java consumer finds the three and takes the items of each.
	java.MustDo(fmt.Sprintf("qsharder j3 %s %s 3 100 3 ok", jobs, lead))
	t.Cleanup(func() { _, _ = java.Do("qsclose j3") })
	if got := javaPaths("j3"); !slices.Equal(got, three) {
		t.Fatalf("Java sees shards %v, Go %v", got, three)
	}
	if err := queue.New(c, three[2]).Put(ctx, []byte("last")); err != nil {
		t.Fatal(err)
	}
	jgot := javaItems(t, java, "j3", 4)
	slices.Sort(jgot)
	if want := []string{"0", "1", "2", "last"}; !slices.Equal(jgot, want) {
		t.Fatalf("Java consumed %v, want %v", jgot, want)
	}
}
