package queue_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/queue"
)

type job struct {
	ID   int    `json:"id"`
	Name string `json:"name"`
}

// Typed puts values (one and several to a node) and hands them over
// decoded, in order; an item no consumer can decode is never handed to
// fn, is reported as ErrCorruptItem and is dropped, not requeued, in the
// default Requeue mode, with and without a lock path, while the items
// after it in its node are put back and still come.
func TestTypedRoundTripAndUndecodableItems(t *testing.T) {
	t.Parallel()
	for _, lock := range []bool{false, true} {
		name := "unlocked"
		if lock {
			name = "locked"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := testkit.Ctx(t)
			c := testkit.Connect(t, zkAddr, testkit.Unique(t))
			opt, errs := errorSink()
			opts := []queue.Option{opt}
			if lock {
				opts = append(opts, queue.WithLockPath("/locks"))
			}
			q := queue.New(c, "/jobs", opts...)
			tq := queue.NewTyped(q, queue.JSON[job]{})
			if err := tq.Put(ctx, job{1, "a"}); err != nil {
				t.Fatal(err)
			}
			// A foreign item: bytes that are not a job, alone and in
			// the middle of a node of three.
			if err := q.Put(ctx, []byte("not json")); err != nil {
				t.Fatal(err)
			}
			if err := q.PutMulti(ctx, [][]byte{[]byte(`{"id":2,"name":"b"}`), []byte("{"), []byte(`{"id":3,"name":"c"}`)}); err != nil {
				t.Fatal(err)
			}
			if err := tq.PutMulti(ctx, []job{{4, "d"}, {5, "e"}}); err != nil {
				t.Fatal(err)
			}
			got := make(chan job, 10)
			cctx, cancel := context.WithCancel(ctx)
			done := make(chan error, 1)
			go func() {
				done <- tq.Consume(cctx, func(_ context.Context, v job, it queue.Item) error {
					got <- v
					return nil
				})
			}()
			var ids []int
			for len(ids) < 5 {
				select {
				case v := <-got:
					ids = append(ids, v.ID)
				case <-time.After(testkit.Deadline):
					t.Fatalf("consumed %v; want ids 1 to 5", ids)
				}
			}
			// The item after the undecodable one in its node is put
			// back at the tail (as after any failure), so 3 comes last.
			if want := []int{1, 2, 4, 5, 3}; !slices.Equal(ids, want) {
				t.Fatalf("consumed ids %v; want %v", ids, want)
			}
			corrupt := 0
			testkit.Eventually(t, "two undecodable items reported", func() bool {
				for {
					select {
					case err := <-errs:
						if errors.Is(err, queue.ErrCorruptItem) {
							corrupt++
						}
					default:
						return corrupt == 2
					}
				}
			})
			testkit.Eventually(t, "the queue empty (nothing requeued)", func() bool {
				return len(items(t, c, "/jobs", "queue-")) == 0
			})
			cancel()
			if err := <-done; !errors.Is(err, context.Canceled) {
				t.Fatalf("Consume = %v; want context.Canceled", err)
			}
			select {
			case v := <-got:
				t.Fatalf("an undecodable item was handed over as %+v", v)
			default:
			}
		})
	}
}

// A value the codec refuses is ErrInvalidOption and writes nothing; nil
// handles and codecs are ErrNilHandle.
func TestTypedBadInput(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t)
	c := testkit.Connect(t, zkAddr, testkit.Unique(t))
	q := queue.New(c, "/jobs")
	tq := queue.NewTyped(q, queue.JSON[chan int]{})
	if err := tq.Put(ctx, make(chan int)); !errors.Is(err, queue.ErrInvalidOption) {
		t.Fatalf("Put of a value JSON cannot encode = %v; want ErrInvalidOption", err)
	}
	if err := tq.PutMulti(ctx, []chan int{make(chan int)}); !errors.Is(err, queue.ErrInvalidOption) {
		t.Fatalf("PutMulti of a value JSON cannot encode = %v; want ErrInvalidOption", err)
	}
	if st, err := c.Exists(ctx, "/jobs"); err != nil || st != nil {
		t.Fatalf("a refused put wrote the queue node (%v, %v)", st, err)
	}
	var nilTyped *queue.Typed[int]
	noCodec := queue.NewTyped[int](q, nil)
	for name, err := range map[string]error{
		"nil Put":          nilTyped.Put(ctx, 1),
		"nil Consume":      nilTyped.Consume(ctx, func(context.Context, int, queue.Item) error { return nil }),
		"no codec Put":     noCodec.Put(ctx, 1),
		"no codec Consume": noCodec.Consume(ctx, func(context.Context, int, queue.Item) error { return nil }),
	} {
		if !errors.Is(err, queue.ErrNilHandle) {
			t.Errorf("%s = %v; want ErrNilHandle", name, err)
		}
	}
	if err := queue.NewTyped(q, queue.JSON[int]{}).Consume(ctx, nil); !errors.Is(err, queue.ErrInvalidOption) {
		t.Errorf("Consume(nil) = %v; want ErrInvalidOption", err)
	}
}
