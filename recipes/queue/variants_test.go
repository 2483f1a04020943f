package queue_test

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/queue"
)

var errTold = errors.New("told to fail")

// A priority queue writes Curator's names and is consumed lowest priority
// first, then in put order; each item says its priority.
func TestPriorityQueue(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t)
	c := testkit.Connect(t, zkAddr, testkit.Unique(t))
	q := queue.NewPriority(c, "/pq")
	for _, p := range []struct {
		data string
		prio int
	}{{"five", 5}, {"minus three", -3}, {"zero", 0}, {"five again", 5}, {"hundred", 100}} {
		if err := q.Put(ctx, []byte(p.data), p.prio); err != nil {
			t.Fatal(err)
		}
	}
	if err := q.PutMulti(ctx, [][]byte{[]byte("m1"), []byte("m2")}, -4); err != nil {
		t.Fatal(err)
	}
	if err := q.Put(ctx, nil, 1<<31); !errors.Is(err, queue.ErrInvalidOption) {
		t.Fatalf("Put with a priority past int32 = %v", err)
	}
	names := items(t, c, "/pq", "")
	re := regexp.MustCompile(`^queue-[01][0-9A-F]{8}\d{10}$`)
	for _, n := range names {
		if !re.MatchString(n) {
			t.Fatalf("node %s is not Curator's priority name", n)
		}
	}
	if !strings.HasPrefix(names[0], "queue-0FFFFFFFC") || !strings.HasPrefix(names[len(names)-1], "queue-100000064") {
		t.Fatalf("names %v: want -4 first and 100 last", names)
	}
	k := consume(t, q, nil)
	var got []string
	for range 7 {
		it := k.next(t)
		got = append(got, fmt.Sprintf("%s(%d)", it.Data, it.Priority))
	}
	if want := "[m1(-4) m2(-4) minus three(-3) zero(0) five(5) five again(5) hundred(100)]"; fmt.Sprint(got) != want {
		t.Fatalf("consumed %v, want %s", got, want)
	}
}

// An item put while the consumer works comes next if it is more urgent
// than what the consumer listed before (Curator's minItemsBeforeRefresh).
func TestPriorityUrgentItemTakenNext(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t)
	c := testkit.Connect(t, zkAddr, testkit.Unique(t))
	// Lock mode, and the put on the consumer's own session: the server
	// sends the children event before the put's reply, and the consumer
	// removes "a" (one more round trip) before it looks for the event.
	q := queue.NewPriority(c, "/pq", queue.WithLockPath("/pq-locks"))
	for _, d := range []string{"a", "b", "c"} {
		if err := q.Put(ctx, []byte(d), 5); err != nil {
			t.Fatal(err)
		}
	}
	release := make(chan struct{})
	k := consume(t, q, func(ctx context.Context, it queue.Item) error {
		if string(it.Data) == "a" {
			<-release
		}
		return nil
	})
	if it := k.next(t); string(it.Data) != "a" {
		t.Fatalf("first %q", it.Data)
	}
	if err := q.Put(ctx, []byte("urgent"), 0); err != nil {
		t.Fatal(err)
	}
	close(release)
	var got []string
	for range 3 {
		got = append(got, string(k.next(t).Data))
	}
	if fmt.Sprint(got) != "[urgent b c]" {
		t.Fatalf("after a: %v, want the urgent item first", got)
	}
}

// A requeued priority item keeps its priority: an item put meanwhile with
// a lower one goes first (Curator 5.4 requeues it as "queue-<seq>", which
// sorts before every priority: it jumps the queue).
func TestPriorityRequeueKeepsPriority(t *testing.T) {
	t.Parallel()
	base := "/" + testkit.Unique(t)
	c := testkit.Connect(t, zkAddr, "")
	for i, m := range lockModes(base) {
		t.Run(m.name, func(t *testing.T) {
			ctx := testkit.Ctx(t)
			path := fmt.Sprintf("%s/pq%d", base, i)
			opts := []queue.Option{}
			if m.lock != "" {
				opts = append(opts, queue.WithLockPath(m.lock))
			}
			q := queue.NewPriority(c, path, opts...)
			if err := q.Put(ctx, []byte("x"), 9); err != nil {
				t.Fatal(err)
			}
			var once sync.Once
			k := consume(t, q, func(ctx context.Context, it queue.Item) error {
				err := error(nil)
				once.Do(func() {
					if perr := q.Put(ctx, []byte("y"), 1); perr != nil {
						t.Error(perr)
					}
					err = errTold
				})
				return err
			})
			var got []string
			for range 3 {
				it := k.next(t)
				got = append(got, fmt.Sprintf("%s(%d)", it.Data, it.Priority))
				if string(it.Data) == "x" && !strings.HasPrefix(it.Name, "queue-100000009") {
					t.Fatalf("x came as %s", it.Name)
				}
			}
			if fmt.Sprint(got) != "[x(9) y(1) x(9)]" {
				t.Fatalf("consumed %v: the requeued x must wait behind y", got)
			}
		})
	}
}

// An id queue writes "queue-|<id>|<seq>"; Remove deletes the items of an
// id that no consumer holds, ids with '/' or '|' included (Curator cannot
// remove those: it compares the id as given with the one in the name).
func TestIDQueueRemove(t *testing.T) {
	t.Parallel()
	base := "/" + testkit.Unique(t)
	c := testkit.Connect(t, zkAddr, "")
	for i, m := range lockModes(base) {
		t.Run(m.name, func(t *testing.T) {
			ctx := testkit.Ctx(t)
			path := fmt.Sprintf("%s/iq%d", base, i)
			opts := []queue.Option{}
			if m.lock != "" {
				opts = append(opts, queue.WithLockPath(m.lock))
			}
			q := queue.NewID(c, path, opts...)
			for _, p := range [][2]string{{"a", "a1"}, {"b", "b1"}, {"a", "a2"}, {"c/d|e", "odd"}, {"h", "held"}} {
				if err := q.PutID(ctx, p[0], []byte(p[1])); err != nil {
					t.Fatal(err)
				}
			}
			if err := q.PutID(ctx, "", nil); !errors.Is(err, queue.ErrInvalidOption) {
				t.Fatalf("PutID with no id = %v", err)
			}
			names := items(t, c, path, "")
			re := regexp.MustCompile(`^queue-\|(a|b|c_d_e|h)\|\d{10}$`)
			for _, n := range names {
				if !re.MatchString(n) {
					t.Fatalf("node %s is not Curator's id name", n)
				}
			}
			if n, err := q.Remove(ctx, "a"); err != nil || n != 2 {
				t.Fatalf("Remove(a) = %d, %v; want 2", n, err)
			}
			if n, err := q.Remove(ctx, "c/d|e"); err != nil || n != 1 {
				t.Fatalf("Remove(c/d|e) = %d, %v; want 1", n, err)
			}
			if n, err := q.Remove(ctx, "nobody"); err != nil || n != 0 {
				t.Fatalf("Remove(nobody) = %d, %v", n, err)
			}
			release := make(chan struct{})
			k := consume(t, q, func(ctx context.Context, it queue.Item) error {
				if it.ID == "h" {
					<-release
				}
				return nil
			})
			it := k.next(t)
			if string(it.Data) != "b1" || it.ID != "b" {
				t.Fatalf("first item %q id %q, want b1 of b", it.Data, it.ID)
			}
			held := k.next(t)
			if held.ID != "h" {
				t.Fatalf("second item %q id %q", held.Data, held.ID)
			}
			n, err := q.Remove(ctx, "h")
			if err != nil {
				t.Fatal(err)
			}
			if m.lock != "" {
				// Locked: it stays for its consumer, and Remove left no
				// lock node of its own.
				if n != 0 || len(items(t, c, path, "")) != 1 {
					t.Fatalf("Remove of a held item = %d, queue %v", n, items(t, c, path, ""))
				}
				if locks := items(t, c, m.lock, ""); len(locks) != 1 || locks[0] != held.Name {
					t.Fatalf("lock nodes %v, want the consumer's only", locks)
				}
			} else if n != 0 {
				t.Fatalf("Remove of an item already taken = %d", n)
			}
			close(release)
			testkit.Eventually(t, "the queue emptied", func() bool { return len(testkit.Children(t, c, path)) == 0 })
			if m.lock != "" {
				testkit.Eventually(t, "the locks emptied", func() bool { return len(testkit.Children(t, c, m.lock)) == 0 })
			}
		})
	}
}

// CURATOR-56, CURATOR-224: a requeued id item keeps its id, and its name
// does not grow with each requeue.
func TestIDRequeueKeepsID(t *testing.T) {
	t.Parallel()
	base := "/" + testkit.Unique(t)
	c := testkit.Connect(t, zkAddr, "")
	for i, m := range lockModes(base) {
		t.Run(m.name, func(t *testing.T) {
			ctx := testkit.Ctx(t)
			path := fmt.Sprintf("%s/iq%d", base, i)
			opts := []queue.Option{}
			if m.lock != "" {
				opts = append(opts, queue.WithLockPath(m.lock))
			}
			q := queue.NewID(c, path, opts...)
			if err := q.PutID(ctx, "job-7", []byte("work")); err != nil {
				t.Fatal(err)
			}
			fails := 2
			k := consume(t, q, func(ctx context.Context, it queue.Item) error {
				if fails > 0 {
					fails--
					return errTold
				}
				return nil
			})
			re := regexp.MustCompile(`^queue-\|job-7\|\d{10}$`)
			seen := map[string]bool{}
			for range 3 {
				it := k.next(t)
				if it.ID != "job-7" || !re.MatchString(it.Name) || string(it.Data) != "work" {
					t.Fatalf("delivered %s (id %q) %q", it.Name, it.ID, it.Data)
				}
				seen[it.Name] = true
			}
			if len(seen) != 3 {
				t.Fatalf("names %v: each requeue makes a new node", seen)
			}
			testkit.Eventually(t, "the queue emptied", func() bool { return len(testkit.Children(t, c, path)) == 0 })
		})
	}
}

// A delay queue delivers each item no earlier than its time, in time
// order, an item whose time has passed at once.
func TestDelayQueue(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t)
	c := testkit.Connect(t, zkAddr, testkit.Unique(t))
	q := queue.NewDelay(c, "/dq")
	now := time.Now()
	for _, p := range []struct {
		data string
		at   time.Time
	}{{"late", now.Add(600 * time.Millisecond)}, {"soon", now.Add(300 * time.Millisecond)}, {"past", now.Add(-time.Hour)}} {
		if err := q.Put(ctx, []byte(p.data), p.at); err != nil {
			t.Fatal(err)
		}
	}
	if err := q.Put(ctx, nil, time.Time{}); !errors.Is(err, queue.ErrInvalidOption) {
		t.Fatalf("Put with the zero time = %v", err)
	}
	re := regexp.MustCompile(`^queue-\|[0-9A-F]{8,}\|\d{10}$`)
	for _, n := range items(t, c, "/dq", "") {
		if !re.MatchString(n) {
			t.Fatalf("node %s is not Curator's delay name", n)
		}
	}
	type got struct {
		data     string
		due, now time.Time
	}
	ch := make(chan got, 3)
	consume(t, q, func(ctx context.Context, it queue.Item) error {
		ch <- got{string(it.Data), it.Due, time.Now()}
		return nil
	})
	var order []string
	for range 3 {
		select {
		case g := <-ch:
			order = append(order, g.data)
			if g.now.Before(g.due) {
				t.Errorf("%s delivered at %v, before its time %v", g.data, g.now, g.due)
			}
		case <-time.After(testkit.Deadline):
			t.Fatalf("consumed %v only", order)
		}
	}
	if fmt.Sprint(order) != "[past soon late]" {
		t.Fatalf("order %v", order)
	}
}

// fakeClock is a clock the test moves.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers map[*fakeTimer]bool
}

type fakeTimer struct {
	at time.Time
	ch chan time.Time
}

func newFakeClock(now time.Time) *fakeClock {
	return &fakeClock{now: now, timers: map[*fakeTimer]bool{}}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) After(d time.Duration) (<-chan time.Time, func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{at: c.now.Add(d), ch: make(chan time.Time, 1)}
	if d <= 0 {
		t.ch <- c.now
	} else {
		c.timers[t] = true
	}
	return t.ch, func() {
		c.mu.Lock()
		delete(c.timers, t)
		c.mu.Unlock()
	}
}

// set moves the clock to now and fires the timers due.
func (c *fakeClock) set(now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = now
	for t := range c.timers {
		if !t.at.After(now) {
			t.ch <- now
			delete(c.timers, t)
		}
	}
}

// A waiting delay consumer sleeps exactly until its earliest item is due
// (Curator's consumer sleeps so too, but only inside one listing; ours
// has no polling interval at all) and takes it when the clock gets there,
// not before.
func TestDelayWakesWhenDue(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t)
	c := testkit.Connect(t, zkAddr, testkit.Unique(t))
	q := queue.NewDelay(c, "/dq")
	t0 := time.UnixMilli(time.Now().UnixMilli())
	clk := newFakeClock(t0)
	queue.SetClock(q, clk)
	waits := make(chan time.Duration, 100)
	queue.OnWait(q, func(d time.Duration) { waits <- d })
	if err := q.Put(ctx, []byte("in an hour"), t0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := q.Put(ctx, []byte("in two"), t0.Add(2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	k := consume(t, q, nil)
	// wantWait takes the consumer's sleeps until one for d; every sleep is
	// until the earliest item (a poll would sleep less).
	wantWait := func(d time.Duration) {
		t.Helper()
		for {
			select {
			case got := <-waits:
				if got != d {
					t.Fatalf("consumer sleeps %v, want %v (until the earliest item)", got, d)
				}
				return
			case it := <-k.items:
				t.Fatalf("took %q at %v, before its time", it.Data, clk.Now())
			case <-time.After(testkit.Deadline):
				t.Fatalf("consumer never slept for %v", d)
			}
		}
	}
	wantWait(time.Hour)
	clk.set(t0.Add(time.Hour))
	if it := k.next(t); string(it.Data) != "in an hour" || !it.Due.Equal(t0.Add(time.Hour)) {
		t.Fatalf("took %q due %v", it.Data, it.Due)
	}
	// The deletion wakes it once more: it sleeps until the second item.
	wantWait(time.Hour)
	clk.set(t0.Add(3 * time.Hour))
	if it := k.next(t); string(it.Data) != "in two" {
		t.Fatalf("took %q", it.Data)
	}
	testkit.Eventually(t, "the queue emptied", func() bool { return len(testkit.Children(t, c, "/dq")) == 0 })
}

// A requeued delay item keeps its time: it is due at once and keeps its
// place before items due later (Curator requeues it without a time).
func TestDelayRequeueKeepsTime(t *testing.T) {
	t.Parallel()
	base := "/" + testkit.Unique(t)
	c := testkit.Connect(t, zkAddr, "")
	for i, m := range lockModes(base) {
		t.Run(m.name, func(t *testing.T) {
			ctx := testkit.Ctx(t)
			path := fmt.Sprintf("%s/dq%d", base, i)
			opts := []queue.Option{}
			if m.lock != "" {
				opts = append(opts, queue.WithLockPath(m.lock))
			}
			q := queue.NewDelay(c, path, opts...)
			at := time.UnixMilli(time.Now().Add(-time.Minute).UnixMilli())
			if err := q.PutMulti(ctx, [][]byte{[]byte("x1"), []byte("x2")}, at); err != nil {
				t.Fatal(err)
			}
			failed := false
			k := consume(t, q, func(ctx context.Context, it queue.Item) error {
				if string(it.Data) == "x2" && !failed {
					failed = true
					return errTold
				}
				return nil
			})
			first := k.next(t)
			var got []string
			for range 2 {
				it := k.next(t)
				got = append(got, string(it.Data))
				if !it.Due.Equal(at) || !strings.HasPrefix(it.Name, strings.SplitAfter(first.Name, "|")[0]+strings.SplitAfter(first.Name, "|")[1]) {
					t.Fatalf("%q came as %s due %v, want due %v", it.Data, it.Name, it.Due, at)
				}
			}
			if fmt.Sprint(got) != "[x2 x2]" {
				t.Fatalf("after x1: %v, want x2 twice (x1 is not redelivered)", got)
			}
			testkit.Eventually(t, "the queue emptied", func() bool { return len(testkit.Children(t, c, path)) == 0 })
		})
	}
}

// The variants' handles refuse bad input, typed.
func TestVariantsBadInput(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t)
	c := testkit.Connect(t, zkAddr, testkit.Unique(t))
	var nilID *queue.IDQueue
	var nilP *queue.PriorityQueue
	var nilD *queue.DelayQueue
	for _, tc := range []struct {
		name string
		call func() error
		want error
	}{
		{"nil id queue", func() error { return nilID.PutID(ctx, "a", nil) }, queue.ErrNilHandle},
		{"nil id queue remove", func() error { _, err := nilID.Remove(ctx, "a"); return err }, queue.ErrNilHandle},
		{"nil priority queue", func() error { return nilP.Put(ctx, nil, 1) }, queue.ErrNilHandle},
		{"nil delay queue", func() error { return nilD.Consume(ctx, nil) }, queue.ErrNilHandle},
		{"id queue bad path", func() error { return queue.NewID(c, "x").PutID(ctx, "a", nil) }, queue.ErrInvalidPath},
		{"remove empty id", func() error { _, err := queue.NewID(c, "/q").Remove(ctx, ""); return err }, queue.ErrInvalidOption},
		{"priority empty multi", func() error { return queue.NewPriority(c, "/q").PutMulti(ctx, nil, 1) }, queue.ErrInvalidOption},
		{"delay empty multi", func() error { return queue.NewDelay(c, "/q").PutMulti(ctx, nil, time.Now()) }, queue.ErrInvalidOption},
		{"delay before the epoch", func() error { return queue.NewDelay(c, "/q").Put(ctx, nil, time.UnixMilli(-5)) }, queue.ErrInvalidOption},
		{"closed", func() error {
			q := queue.NewPriority(c, "/q")
			if err := q.Close(ctx); err != nil {
				return err
			}
			return q.Put(ctx, nil, 1)
		}, queue.ErrClosed},
	} {
		if err := tc.call(); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
	if n, err := queue.NewID(c, "/missing").Remove(ctx, "a"); err != nil || n != 0 {
		t.Errorf("Remove on a missing queue = %d, %v", n, err)
	}
}
