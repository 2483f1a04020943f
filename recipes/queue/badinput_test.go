package queue_test

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/queue"
)

// Foreign and corrupt nodes never stop a consumer: corrupt items (wrong
// version word, truncated frames, raw bytes) are reported once each with
// ErrCorruptItem and left in the queue, or moved to the park path with
// their data; foreign children are passed by; the good items around them
// are consumed in order.
func TestCorruptItemsReportedSkippedOrParked(t *testing.T) {
	t.Parallel()
	corrupt := [][]byte{
		{0, 1, 0, 2, 2},             // another version
		{0, 1, 0, 1, 1, 0, 0, 0, 9}, // truncated
		[]byte("raw bytes"),         // a simple queue's item
		{},                          // empty
	}
	for _, park := range []string{"", "/parked"} {
		for _, m := range lockModes("/locks") {
			t.Run(fmt.Sprintf("%s park=%q", m.name, park), func(t *testing.T) {
				t.Parallel()
				ctx := testkit.Ctx(t)
				c := testkit.Connect(t, zkAddr, testkit.Unique(t))
				var bad []string
				for i, data := range corrupt {
					if err := queue.New(c, "/q").Put(ctx, []byte(fmt.Sprint("good", i))); err != nil {
						t.Fatal(err)
					}
					name, err := c.Create(ctx, "/q/queue-", data, framework.WithMode(framework.PersistentSequential))
					if err != nil {
						t.Fatal(err)
					}
					bad = append(bad, name[len("/q/"):])
				}
				if _, err := c.Create(ctx, "/q/foreign", []byte("x")); err != nil {
					t.Fatal(err)
				}
				sink, errs := errorSink()
				opts := []queue.Option{sink}
				if m.lock != "" {
					opts = append(opts, queue.WithLockPath(m.lock))
				}
				if park != "" {
					opts = append(opts, queue.WithParkPath(park))
				}
				k := consume(t, queue.New(c, "/q", opts...), nil)
				for i := range corrupt {
					if got, want := string(k.next(t).Data), fmt.Sprint("good", i); got != want {
						t.Fatalf("consumed %q, want %q", got, want)
					}
				}
				reported := map[string]bool{}
				for len(reported) < len(bad) {
					err := <-errs
					if !errors.Is(err, queue.ErrCorruptItem) {
						t.Fatalf("reported %v", err)
					}
					for _, b := range bad {
						if contains(err.Error(), b) {
							reported[b] = true
						}
					}
				}
				left := []string{"foreign"}
				if park == "" {
					left = append(left, bad...) // "foreign" sorts first
				}
				testkit.Eventually(t, "only the corrupt and foreign nodes left", func() bool {
					return fmt.Sprint(items(t, c, "/q", "")) == fmt.Sprint(left)
				})
				if park != "" {
					if got := items(t, c, park, ""); fmt.Sprint(got) != fmt.Sprint(bad) {
						t.Fatalf("parked %v, want %v", got, bad)
					}
					for i, b := range bad {
						if data, _, err := c.Get(ctx, park+"/"+b); err != nil || string(data) != string(corrupt[i]) {
							t.Fatalf("parked %s = %q, %v", b, data, err)
						}
					}
				}
				// Each corrupt node is reported once, and a new item
				// still flows past them.
				if err := queue.New(c, "/q").Put(ctx, []byte("later")); err != nil {
					t.Fatal(err)
				}
				if got := string(k.next(t).Data); got != "later" {
					t.Fatal(got)
				}
				for _, err := range drain(errs) {
					t.Errorf("reported again: %v", err)
				}
			})
		}
	}
}

func contains(s, sub string) bool {
	return strings.Contains(s, sub)
}

// A consume function's error requeues what it did not consume (Curator
// 5.4 requeues a failed putMulti node whole, so its items consumed already
// come again), or drops it with Delete; a consumer that succeeded on an
// item never sees it again.
func TestRequeueKeepsWhatSucceeded(t *testing.T) {
	t.Parallel()
	for _, mode := range []queue.ErrorMode{queue.Requeue, queue.Delete} {
		for _, m := range lockModes("/locks") {
			t.Run(fmt.Sprint(mode, " ", m.name), func(t *testing.T) {
				t.Parallel()
				ctx := testkit.Ctx(t)
				c := testkit.Connect(t, zkAddr, testkit.Unique(t))
				sink, errs := errorSink()
				opts := []queue.Option{queue.WithErrorMode(mode), sink}
				if m.lock != "" {
					opts = append(opts, queue.WithLockPath(m.lock))
				}
				q := queue.New(c, "/q", opts...)
				if err := q.PutMulti(ctx, [][]byte{[]byte("a"), []byte("b"), []byte("c")}); err != nil {
					t.Fatal(err)
				}
				failed := false
				k := consume(t, q, func(_ context.Context, it queue.Item) error {
					if string(it.Data) == "b" && !failed {
						failed = true
						return errors.New("b fails once")
					}
					return nil
				})
				want := "[a b b c]"
				if mode == queue.Delete {
					want = "[a b]"
				}
				var got []string
				for range len(want[1:len(want)-1])/2 + 1 {
					got = append(got, string(k.next(t).Data))
				}
				if fmt.Sprint(got) != want {
					t.Fatalf("consumed %v, want %v", got, want)
				}
				testkit.Eventually(t, "the queue emptied", func() bool { return len(testkit.Children(t, c, "/q")) == 0 })
				if extra := drain(k.items); len(extra) != 0 {
					t.Fatalf("consumed again: %v", extra)
				}
				select {
				case err := <-errs:
					if !errors.Is(err, queue.ErrConsumer) || !strings.Contains(err.Error(), "b fails once") {
						t.Fatalf("reported %v, want the consumer's error", err)
					}
				case <-time.After(testkit.Deadline):
					t.Fatal("the consumer's error was not reported")
				}
				if rep := drain(errs); len(rep) != 0 {
					t.Fatalf("reported more: %v", rep)
				}
			})
		}
	}
}

// Pitfall 29: a queue whose listing exceeds jute.maxbuffer (Curator's
// consumers, whose client refuses the reply, fail on it in a loop) is
// reported once with ErrBacklog, and its items are still consumed.
func TestListingOverMaxBufferReportedAndConsumed(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t)
	c := testkit.Connect(t, zkAddr, testkit.Unique(t))
	q := queue.New(c, "/q")
	if err := q.Put(ctx, []byte("first")); err != nil {
		t.Fatal(err)
	}
	// Foreign children with long names make the listing big cheaply:
	// 5200 x (4 + 206) bytes, 1.09 MB.
	pad := strings.Repeat("x", 200)
	var ops []framework.Op
	var paths []string
	for i := range 5200 {
		p := fmt.Sprintf("/q/%s%06d", pad, i)
		paths = append(paths, p)
		ops = append(ops, framework.CreateOp(p, []byte{}, framework.Persistent))
		if len(ops) == 1300 {
			if _, err := c.Multi(ctx, ops...); err != nil {
				t.Fatal(err)
			}
			ops = ops[:0]
		}
	}
	t.Cleanup(func() {
		ctx := context.Background()
		for i := 0; i < len(paths); i += 1300 {
			var del []framework.Op
			for _, p := range paths[i:min(i+1300, len(paths))] {
				del = append(del, framework.DeleteOp(p, -1))
			}
			if _, err := c.Multi(ctx, del...); err != nil {
				t.Error(err)
			}
		}
	})
	if err := q.Put(ctx, []byte("second")); err != nil {
		t.Fatal(err)
	}
	sink, errs := errorSink()
	k := consume(t, queue.New(c, "/q", sink), nil)
	for _, want := range []string{"first", "second"} {
		if got := string(k.next(t).Data); got != want {
			t.Fatalf("consumed %q, want %q", got, want)
		}
	}
	select {
	case err := <-errs:
		if !errors.Is(err, queue.ErrBacklog) {
			t.Fatalf("reported %v, want ErrBacklog", err)
		}
	case <-time.After(testkit.Deadline):
		t.Fatal("the big listing was not reported")
	}
	if err := q.Put(ctx, []byte("third")); err != nil {
		t.Fatal(err)
	}
	if got := string(k.next(t).Data); got != "third" {
		t.Fatal(got)
	}
	for _, err := range drain(errs) {
		t.Errorf("reported again: %v", err)
	}
}

// The largest item a Put accepts leaves no room in the lock transaction
// for the rewrite that fences it: it is locked as Curator locks (Fenced
// false), consumed and removed, never stuck.
func TestLargestItemConsumedUnfenced(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t)
	c := testkit.Connect(t, zkAddr, testkit.Unique(t))
	q := queue.New(c, "/q", queue.WithLockPath("/locks"))
	err := q.Put(ctx, make([]byte, framework.DefaultJuteMaxBuffer))
	m := regexp.MustCompile(`room for (\d+) bytes`).FindStringSubmatch(fmt.Sprint(err))
	if !errors.Is(err, queue.ErrDataTooLarge) || m == nil {
		t.Fatalf("Put of jute.maxbuffer bytes = %v", err)
	}
	room, _ := strconv.Atoi(m[1])
	// The framing takes 10 bytes of the room.
	if err := q.Put(ctx, make([]byte, room-10)); err != nil {
		t.Fatal(err)
	}
	k := consume(t, q, nil)
	if it := k.next(t); len(it.Data) != room-10 || it.Fenced() || len(it.RemoveOps()) != 0 {
		t.Fatalf("item of %d bytes, fenced %v", len(it.Data), it.Fenced())
	}
	testkit.Eventually(t, "the item removed", func() bool {
		return len(testkit.Children(t, c, "/q")) == 0 && len(testkit.Children(t, c, "/locks")) == 0
	})
}
