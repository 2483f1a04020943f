package locking_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/locking"
	"github.com/gocurator/curator/zktest"
)

const (
	lockPath = "/slots/pool"
	slotDir  = lockPath + "/slots"
)

// slotDriver admits a node while its directory has at most max children,
// foreign ones included, and waits on a children watch: Curator's V2
// semaphore rule, without the gate unless begin gives it one.
type slotDriver struct {
	begin func(ctx context.Context, wait bool) (locking.Attempt, error) // nil: no attempts

	mu   sync.Mutex
	seen [][]string // what GetsTheLock was given, in order
}

func (*slotDriver) Layout() locking.Layout {
	return locking.Layout{Dir: "slots", AllChildren: true, WatchChildren: true}
}

func (*slotDriver) Node() locking.NodeSpec {
	return locking.NodeSpec{Name: "slot-", Mode: framework.EphemeralSequential}
}

func (*slotDriver) Sequence(child string) (int32, bool) { return locking.Sequence(child, "slot-") }

func (d *slotDriver) GetsTheLock(l locking.Listing) (locking.Verdict, error) {
	d.mu.Lock()
	d.seen = append(d.seen, slices.Clone(l.Sorted))
	d.mu.Unlock()
	return locking.Verdict{Held: len(l.Sorted) <= l.Limit}, nil
}

func (d *slotDriver) listings() [][]string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.seen)
}

// gatedDriver is a slotDriver with attempts.
type gatedDriver struct{ *slotDriver }

func (d gatedDriver) Begin(ctx context.Context, wait bool) (locking.Attempt, error) {
	return d.begin(ctx, wait)
}

type acquired struct {
	h   *locking.Hold
	err error
}

func acquireAsync(ctx context.Context, l *locking.Loop) <-chan acquired {
	out := make(chan acquired, 1)
	go func() {
		h, err := l.Acquire(ctx)
		out <- acquired{h, err}
	}()
	return out
}

func await(t *testing.T, ch <-chan acquired) acquired {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-testkit.Ctx(t).Done():
		t.Fatal("acquire did not return")
		return acquired{}
	}
}

// waitSlots waits until the directory has n children.
func waitSlots(t *testing.T, c *framework.Client, n int) []string {
	t.Helper()
	var got []string
	testkit.Eventually(t, fmt.Sprintf("%s has %d children", slotDir, n), func() bool {
		got = testkit.Children(t, c, slotDir)
		return len(got) == n
	})
	return got
}

func release(t *testing.T, h *locking.Hold) {
	t.Helper()
	if err := h.Release(testkit.Ctx(t)); err != nil {
		t.Fatal(err)
	}
}

// The loop on a DirDriver (a sub-directory, every child counted, a children
// watch) and an AttemptDriver (work around each node). The subtests run one
// at a time. The first two count children watches, which ZooKeeper only
// counts server-wide (mntr's zk_watch_count; wchc and wchp, per session and
// per path, list data watches only): they run on a server of their own,
// which no other test's watches reach; the others on the package's.
func TestLayoutDriver(t *testing.T) {
	srv := zktest.StartServer(t)
	own := srv.ConnectString() // for the subtests that count every watch
	addr := zkAddr
	// watches counts every watch of srv, children watches too.
	watches := func(t *testing.T) int {
		t.Helper()
		out, err := srv.FourLetterWord("mntr")
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(out, "\n") {
			if v, ok := strings.CutPrefix(line, "zk_watch_count\t"); ok {
				n, err := strconv.Atoi(strings.TrimSpace(v))
				if err != nil {
					t.Fatal(err)
				}
				return n
			}
		}
		t.Fatalf("no zk_watch_count in mntr: %q", out)
		return 0
	}

	t.Run("every child counts, foreign ones last, and waiters wait on the directory", func(t *testing.T) {
		ns := testkit.Unique(t)
		ctx := testkit.Ctx(t)
		admin := testkit.Connect(t, own, ns)
		if _, err := admin.Create(ctx, slotDir+"/config", nil, framework.CreatingParentContainers()); err != nil {
			t.Fatal(err)
		}
		two := locking.WithLimit(func() (int, <-chan struct{}) { return 2, nil })
		d1 := &slotDriver{}
		h1, err := locking.New(testkit.Connect(t, own, ns), lockPath, d1, two).Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		dir, own1 := framework.SplitPath(h1.Node())
		if dir != slotDir {
			t.Fatalf("node %s, want it in %s", h1.Node(), slotDir)
		}
		if got := d1.listings(); len(got) != 1 || fmt.Sprint(got[0]) != fmt.Sprint([]string{own1, "config"}) {
			t.Fatalf("GetsTheLock saw %v, want one listing: [%s config]", got, own1)
		}
		// An admitted acquire leaves no watch: its one listing came with
		// the create and set none.
		if n := watches(t); n != 0 {
			t.Fatalf("server holds %d watches after an admitted acquire, want 0", n)
		}

		wc := testkit.Connect(t, own, ns)
		d2 := &slotDriver{}
		w := acquireAsync(ctx, locking.New(wc, lockPath, d2, two))
		// Three children, max 2: it waits, with one watch, and that is a
		// children watch (wchs counts data watches only, and sees none).
		testkit.Eventually(t, "the waiter's one watch", func() bool { return watches(t) == 1 })
		if n, err := srv.WatchCount(); err != nil || n != 0 {
			t.Fatalf("the waiter holds %d data watches (%v), want only a children watch", n, err)
		}
		select {
		case r := <-w:
			t.Fatalf("acquire with 3 children and max 2 returned %v, %v", r.h, r.err)
		default:
		}
		// The foreign child's deletion is a change of the directory only:
		// it lets the waiter in.
		if err := admin.Delete(ctx, slotDir+"/config"); err != nil {
			t.Fatal(err)
		}
		r := await(t, w)
		if r.err != nil {
			t.Fatal(r.err)
		}
		seen := d2.listings()
		for _, l := range seen[:len(seen)-1] {
			if len(l) != 3 || l[2] != "config" {
				t.Fatalf("listing %v while waiting: want 3 children, the foreign one last", l)
			}
		}
		p, err := locking.New(admin, lockPath, &slotDriver{}).Participants(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(p) != fmt.Sprint([]string{h1.Node(), r.h.Node()}) {
			t.Fatalf("participants %v, want [%s %s]", p, h1.Node(), r.h.Node())
		}
		release(t, h1)
		release(t, r.h)
		if n := watches(t); n != 0 {
			t.Fatalf("server holds %d watches with every hold released, want 0", n)
		}
	})

	t.Run("a try that would wait leaves no node and no watch", func(t *testing.T) {
		ns := testkit.Unique(t)
		ctx := testkit.Ctx(t)
		c := testkit.Connect(t, own, ns)
		h, err := locking.New(c, lockPath, &slotDriver{}).Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok, err := locking.New(c, lockPath, &slotDriver{}).TryAcquire(ctx); ok || err != nil {
			t.Fatalf("try with the slot taken: %v, %v; want busy (false, nil)", ok, err)
		}
		if got := testkit.Children(t, c, slotDir); len(got) != 1 {
			t.Fatalf("children %v after a failed try, want only the holder's", got)
		}
		if n := watches(t); n != 0 {
			t.Fatalf("server holds %d watches after a failed try, want 0", n)
		}
		release(t, h)
	})

	// attempts records an AttemptDriver's calls; end lists the directory,
	// so that the test sees what End found.
	type attempts struct {
		mu     sync.Mutex
		log    []string
		aborts []chan struct{}
		begun  chan int // the number of each attempt begun
	}
	gated := func(c *framework.Client, a *attempts, check func(n int) func(context.Context, []string) error) gatedDriver {
		return gatedDriver{&slotDriver{begin: func(ctx context.Context, wait bool) (locking.Attempt, error) {
			a.mu.Lock()
			n := len(a.aborts) + 1
			abort := make(chan struct{})
			a.aborts = append(a.aborts, abort)
			a.log = append(a.log, fmt.Sprintf("begin %d", n))
			a.mu.Unlock()
			a.begun <- n
			att := locking.Attempt{Abort: abort, End: func(ctx context.Context) {
				ch, _, err := c.Children(ctx, slotDir)
				if errors.Is(err, zk.ErrNoNode) {
					// The server reaps an empty container at any moment
					// (every second, on a server that has run that long):
					// no directory, no children.
					ch, err = nil, nil
				}
				a.mu.Lock()
				defer a.mu.Unlock()
				a.log = append(a.log, fmt.Sprintf("end %d: %d children %v", n, len(ch), err))
			}}
			if check != nil {
				att.Check = check(n)
			}
			return att, nil
		}}}
	}
	newAttempts := func() *attempts { return &attempts{begun: make(chan int, 10)} }
	logOf := func(a *attempts) string {
		a.mu.Lock()
		defer a.mu.Unlock()
		return strings.Join(a.log, "; ")
	}

	t.Run("an aborted attempt deletes its node, ends, and starts over", func(t *testing.T) {
		ns := testkit.Unique(t)
		ctx := testkit.Ctx(t)
		admin := testkit.Connect(t, addr, ns)
		holder, err := locking.New(admin, lockPath, &slotDriver{}).Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		a := newAttempts()
		w := acquireAsync(ctx, locking.New(testkit.Connect(t, addr, ns), lockPath, gated(admin, a, nil)))
		<-a.begun
		first := waitSlots(t, admin, 2)
		a.mu.Lock()
		close(a.aborts[0])
		a.mu.Unlock()
		if n := <-a.begun; n != 2 {
			t.Fatalf("attempt %d begun after the abort, want 2", n)
		}
		again := waitSlots(t, admin, 2)
		if fmt.Sprint(again) == fmt.Sprint(first) {
			t.Fatalf("children %v after the abort, want a new node of the second attempt", again)
		}
		release(t, holder)
		r := await(t, w)
		if r.err != nil {
			t.Fatal(r.err)
		}
		// The first attempt ended after its node was deleted (the holder's
		// was left), the second once it held (its node alone).
		if got, want := logOf(a), "begin 1; end 1: 1 children <nil>; begin 2; end 2: 1 children <nil>"; got != want {
			t.Fatalf("attempts: %s\nwant:     %s", got, want)
		}
		release(t, r.h)
	})

	t.Run("Check runs once the node exists; its error fails the acquire and leaves nothing", func(t *testing.T) {
		ns := testkit.Unique(t)
		ctx := testkit.Ctx(t)
		c := testkit.Connect(t, addr, ns)
		boom := errors.New("boom")
		var checked []string
		a := newAttempts()
		d := gated(c, a, func(int) func(context.Context, []string) error {
			// The listing that came with the create.
			return func(_ context.Context, listing []string) error {
				checked = listing
				return boom
			}
		})
		if _, err := locking.New(c, lockPath, d).Acquire(ctx); !errors.Is(err, boom) {
			t.Fatalf("acquire with a failing Check: %v, want boom", err)
		}
		if len(checked) != 1 {
			t.Fatalf("Check saw %v, want our node", checked)
		}
		if got := testkit.Children(t, c, slotDir); len(got) != 0 {
			t.Fatalf("children %v after a failed Check, want none", got)
		}
		if got, want := logOf(a), "begin 1; end 1: 0 children <nil>"; got != want {
			t.Fatalf("attempts: %s\nwant:     %s", got, want)
		}
		if got := d.listings(); len(got) != 0 {
			t.Fatalf("GetsTheLock asked %v before Check passed", got)
		}
	})

	t.Run("Check's ErrNoNode starts over", func(t *testing.T) {
		ns := testkit.Unique(t)
		ctx := testkit.Ctx(t)
		c := testkit.Connect(t, addr, ns)
		a := newAttempts()
		d := gated(c, a, func(n int) func(context.Context, []string) error {
			return func(context.Context, []string) error {
				if n == 1 {
					return fmt.Errorf("children: %w", zk.ErrNoNode)
				}
				return nil
			}
		})
		h, err := locking.New(c, lockPath, d).Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := logOf(a), "begin 1; end 1: 0 children <nil>; begin 2; end 2: 1 children <nil>"; got != want {
			t.Fatalf("attempts: %s\nwant:     %s", got, want)
		}
		release(t, h)
	})

	t.Run("Begin's error fails the acquire with no node made", func(t *testing.T) {
		ns := testkit.Unique(t)
		ctx := testkit.Ctx(t)
		c := testkit.Connect(t, addr, ns)
		d := gatedDriver{&slotDriver{begin: func(context.Context, bool) (locking.Attempt, error) {
			return locking.Attempt{End: func(context.Context) { t.Error("End of an attempt that never began") }}, locking.ErrWouldBlock
		}}}
		if _, ok, err := locking.New(c, lockPath, d).TryAcquire(ctx); ok || err != nil {
			t.Fatalf("try with Begin saying ErrWouldBlock: %v, %v; want busy (false, nil)", ok, err)
		}
		if st, err := c.Exists(ctx, lockPath); err != nil || st != nil {
			t.Fatalf("lock path after a failed Begin: %v, %v; want none", st, err)
		}
	})

	t.Run("a directory of more than one segment is refused", func(t *testing.T) {
		c := testkit.Connect(t, addr, testkit.Unique(t))
		l := locking.New(c, lockPath, badDir{&slotDriver{}})
		if _, err := l.Acquire(testkit.Ctx(t)); !errors.Is(err, framework.ErrInvalidPath) {
			t.Fatalf("acquire: %v, want ErrInvalidPath", err)
		}
	})
}

// badDir puts its nodes two levels down.
type badDir struct{ *slotDriver }

func (badDir) Layout() locking.Layout { return locking.Layout{Dir: "a/b"} }
