package queue_test

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"testing"
	"time"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/queue"
)

var itemName = regexp.MustCompile(`^queue-\d{10}$`)

// Put writes Curator's layout: one PERSISTENT_SEQUENTIAL "queue-<seq>"
// node per put, the items framed; the consumer gets them in order and
// removes each node.
func TestPutConsumeLayout(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t)
	c := testkit.Connect(t, zkAddr, testkit.Unique(t))
	q := queue.New(c, "/jobs/q")
	if err := q.Put(ctx, []byte("one")); err != nil {
		t.Fatal(err)
	}
	if err := q.PutMulti(ctx, [][]byte{[]byte("two"), {}, []byte("four")}); err != nil {
		t.Fatal(err)
	}
	names := items(t, c, "/jobs/q", "")
	if len(names) != 2 || !itemName.MatchString(names[0]) || !itemName.MatchString(names[1]) {
		t.Fatalf("children = %v, want two queue-<seq> nodes", names)
	}
	data, st, err := c.Get(ctx, "/jobs/q/"+names[1])
	if err != nil {
		t.Fatal(err)
	}
	if want := queue.EncodeItems([][]byte{[]byte("two"), {}, []byte("four")}); string(data) != string(want) || st.EphemeralOwner != 0 {
		t.Fatalf("multi node = %x (owner %#x), want %x, persistent", data, st.EphemeralOwner, want)
	}
	k := consume(t, q, nil)
	var got []string
	for range 4 {
		it := k.next(t)
		got = append(got, fmt.Sprintf("%s/%d/%d:%s", it.Name, it.Index, it.Count, it.Data))
	}
	want := []string{
		names[0] + "/0/1:one", names[1] + "/0/3:two", names[1] + "/1/3:", names[1] + "/2/3:four",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("consumed %v, want %v", got, want)
	}
	testkit.Eventually(t, "the queue emptied", func() bool { return len(testkit.Children(t, c, "/jobs/q")) == 0 })
}

// Bad input is refused, typed, before anything is written.
func TestBadInput(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t)
	c := testkit.Connect(t, zkAddr, testkit.Unique(t))
	var nilCtx context.Context
	var nilQ *queue.Queue
	var nilS *queue.Simple
	tests := []struct {
		name string
		call func() error
		want error
	}{
		{"nil client", func() error { return queue.New(nil, "/q").Put(ctx, nil) }, queue.ErrNilClient},
		{"bad path", func() error { return queue.New(c, "q").Put(ctx, nil) }, queue.ErrInvalidPath},
		{"root", func() error { return queue.New(c, "/").Put(ctx, nil) }, queue.ErrInvalidPath},
		{"bad lock path", func() error { return queue.New(c, "/q", queue.WithLockPath("x/")).Put(ctx, nil) }, queue.ErrInvalidPath},
		{"bad park path", func() error { return queue.New(c, "/q", queue.WithParkPath("")).Put(ctx, nil) }, queue.ErrInvalidPath},
		{"bad error mode", func() error { return queue.New(c, "/q", queue.WithErrorMode(7)).Put(ctx, nil) }, queue.ErrInvalidOption},
		{"nil option", func() error { return queue.New(c, "/q", nil).Put(ctx, nil) }, queue.ErrInvalidOption},
		{"nil ctx", func() error { return queue.New(c, "/q").Put(nilCtx, nil) }, queue.ErrInvalidOption},
		{"empty multi", func() error { return queue.New(c, "/q").PutMulti(ctx, nil) }, queue.ErrInvalidOption},
		{"nil fn", func() error { return queue.New(c, "/q").Consume(ctx, nil) }, queue.ErrInvalidOption},
		{"nil handle", func() error { return nilQ.Put(ctx, nil) }, queue.ErrNilHandle},
		{"nil handle close", func() error { return nilQ.Close(ctx) }, queue.ErrNilHandle},
		{"simple nil client", func() error { return queue.NewSimple(nil, "/s").Offer(ctx, nil) }, queue.ErrNilClient},
		{"simple bad path", func() error { _, err := queue.NewSimple(c, "/s/").Take(ctx); return err }, queue.ErrInvalidPath},
		{"simple nil ctx", func() error { _, _, err := queue.NewSimple(c, "/s").Poll(nilCtx); return err }, queue.ErrInvalidOption},
		{"simple nil handle", func() error { _, _, err := nilS.Peek(ctx); return err }, queue.ErrNilHandle},
		{"item over jute.maxbuffer", func() error { return queue.New(c, "/q").Put(ctx, make([]byte, framework.DefaultJuteMaxBuffer)) }, queue.ErrDataTooLarge},
		{"multi over jute.maxbuffer", func() error {
			return queue.New(c, "/q").PutMulti(ctx, [][]byte{make([]byte, 600<<10), make([]byte, 600<<10)})
		}, queue.ErrDataTooLarge},
		{"simple item over jute.maxbuffer", func() error {
			return queue.NewSimple(c, "/s").Offer(ctx, make([]byte, framework.DefaultJuteMaxBuffer))
		}, queue.ErrDataTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.call(); !errors.Is(err, tt.want) {
				t.Fatalf("got %v, want %v", err, tt.want)
			}
		})
	}
	if n := testkit.Children(t, c, "/"); len(n) != 0 {
		t.Fatalf("refused calls wrote %v", n)
	}
}

// Several consumers on several clients, two per handle: in lock-safety
// mode every item is consumed exactly once; without a lock path too, when
// nobody fails.
func TestManyConsumersEachItemOnce(t *testing.T) {
	t.Parallel()
	for _, m := range lockModes("/locks") {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			ns := testkit.Unique(t)
			ctx := testkit.Ctx(t)
			p := testkit.Connect(t, zkAddr, ns)
			got := make(chan string, 1000)
			for range 3 {
				q := goQueue(testkit.Connect(t, zkAddr, ns), "/q", m.lock)
				for range 2 {
					consume(t, q, func(_ context.Context, it queue.Item) error {
						got <- string(it.Data)
						return nil
					})
				}
			}
			const n = 60
			producer := goQueue(p, "/q", m.lock)
			for i := range n / 3 {
				if err := producer.Put(ctx, []byte(fmt.Sprint(i))); err != nil {
					t.Fatal(err)
				}
				if err := producer.PutMulti(ctx, [][]byte{[]byte(fmt.Sprint("m", i)), []byte(fmt.Sprint("n", i))}); err != nil {
					t.Fatal(err)
				}
			}
			seen := map[string]int{}
			for range n {
				select {
				case d := <-got:
					seen[d]++
				case <-time.After(testkit.Deadline):
					t.Fatalf("consumed %d items, want %d", len(seen), n)
				}
			}
			testkit.Eventually(t, "the queue emptied", func() bool { return len(testkit.Children(t, p, "/q")) == 0 })
			for _, d := range drain(got) {
				seen[d]++
			}
			if len(seen) != n {
				t.Fatalf("consumed %d distinct items, want %d", len(seen), n)
			}
			for d, times := range seen {
				if times != 1 {
					t.Errorf("%q consumed %d times", d, times)
				}
			}
		})
	}
}
