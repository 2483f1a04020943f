package bench

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gocurator/curator/internal/testkit"
)

func TestMedianQueue(t *testing.T) {
	rows := []QueueResult{
		{Impl: ImplOurs, Mode: QueuePlain, RTTMs: 2, ItemsPerSec: 100, P50Ms: 9},
		{Impl: ImplCurator, Mode: QueuePlain, RTTMs: 2, ItemsPerSec: 50, P50Ms: 20},
		{Impl: ImplOurs, Mode: QueuePlain, RTTMs: 2, ItemsPerSec: 300, P50Ms: 3},
		{Impl: ImplOurs, Mode: QueuePlain, RTTMs: 2, ItemsPerSec: 200, P50Ms: 5, P99Ms: 8, Reads: 3, Writes: 2},
		{Impl: ImplOurs, Mode: QueuePlain, RTTMs: 2, Error: "failed"},
		{Impl: ImplOurs, Mode: QueueSimple, RTTMs: 2, ItemsPerSec: 400, Reads: -1, Writes: -1,
			OpsPerItem: map[string]float64{"getChildren2": 2.5, "delete": 1}},
	}
	got := MedianQueue(rows)
	if len(got) != 3 || got[0].Impl != ImplOurs || got[1].Impl != ImplCurator || got[2].Mode != QueueSimple {
		t.Fatalf("MedianQueue = %+v", got)
	}
	// The median rate's round, its latencies and requests with it.
	if o := got[0]; o.ItemsPerSec != 200 || o.P50Ms != 5 || o.P99Ms != 8 || o.Reads != 3 {
		t.Fatalf("median row %+v: want the 200 items/s round", o)
	}
	if !slices.Equal(got[0].RoundsItems, []float64{100, 300, 200}) || len(got[1].RoundsItems) != 0 {
		t.Fatalf("rounds %v, %v: want every good round in run order, none for one round", got[0].RoundsItems, got[1].RoundsItems)
	}
	var out bytes.Buffer
	WriteQueue(&out, 3, &QueueReport{Settings: QueueSettings{Producers: 4, Consumers: 4, Items: 10},
		Tables: []QueueTable{{RTTMs: 2, MeasuredRTTMs: 2, Rows: got}}})
	for _, want := range []string{
		"## queues, RTT 2ms (an exists takes 2.000 ms)",
		// 4 consumers at 200 items/s: 20 ms per item each, 10 round trips.
		"queue | gocurator | 200 | 4.00x | 5.00 | 8.00 | 10.0 | 3.00 | 2.00",
		"queue | Curator (Java) | 50 | - | 20.00 | 0.00 | 40.0 | 0.00 | 0.00",
		"simple | gocurator | 400 | - | 0.00 | 0.00 | 5.0 | - | -",
		"# requests by type per item (server trace, sessions included), simple gocurator: getChildren2 2.5, delete 1",
	} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("WriteQueue:\n%s\nwant %q", out.String(), want)
		}
	}
	// Paced producers: the consumers' time per item is mostly waiting.
	out.Reset()
	WriteQueue(&out, 1, &QueueReport{Settings: QueueSettings{Producers: 4, Consumers: 4, Items: 10, Rate: 100},
		Tables: []QueueTable{{RTTMs: 2, MeasuredRTTMs: 2, Rows: got[:1]}}})
	if want := "queue | gocurator | 200 | - | 5.00 | 8.00 | - | 3.00 | 2.00"; !strings.Contains(out.String(), want) {
		t.Fatalf("WriteQueue, paced:\n%s\nwant %q", out.String(), want)
	}
}

func TestQueueSink(t *testing.T) {
	base := time.Now().Add(-time.Second)
	k := newQueueSink(base, 2)
	k.add(encodeQueueItem(900*time.Millisecond, 1, 7)) // put 100 ms ago
	k.add(encodeQueueItem(950*time.Millisecond, 2, 8))
	select {
	case <-k.done:
	default:
		t.Fatal("done not closed after the items wanted")
	}
	if k.err != nil || len(k.lat) != 2 || k.lat[0] < 100*time.Millisecond || k.lat[0] > time.Second {
		t.Fatalf("sink: err %v, latencies %v", k.err, k.lat)
	}
	k.add(encodeQueueItem(0, 0, 0))
	if k.err == nil {
		t.Fatal("a third item of two was accepted")
	}
	k = newQueueSink(base, 1)
	k.add([]byte("short"))
	if k.err == nil {
		t.Fatal("a foreign item was accepted")
	}
	if err := CheckQueueSettings(QueueSettings{Producers: 1, Consumers: 1, Items: 1, Rate: -1}); err == nil {
		t.Fatal("a negative rate was accepted")
	}
}

// A short run of each mode of our side: sane figures, every item consumed
// once (or the run fails), nothing left in the queue.
func TestRunOurQueue(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := testkit.Connect(t, zkAddr, "")
	for _, mode := range QueueModes {
		t.Run(mode, func(t *testing.T) {
			base := "/queue-" + testkit.Unique(t)
			r, err := RunOurQueue(ctx, zkAddr, zkAddr, base, mode, QueueSettings{Producers: 2, Consumers: 2, Items: 30})
			if err != nil {
				t.Fatal(err)
			}
			// The server is shared with other tests: a create and a
			// delete per item at least.
			if r.Impl != ImplOurs || r.Mode != mode || r.ItemsPerSec <= 0 || r.P50Ms <= 0 || r.P99Ms < r.P50Ms || r.Writes < 2 {
				t.Fatalf("result %+v", r)
			}
			for _, p := range []string{base + "/q", base + "/locks"} {
				if kids, _, err := c.Children(ctx, p); err == nil && len(kids) > 0 {
					t.Fatalf("%s: %v left", p, kids)
				}
			}
		})
	}
	if _, err := RunOurQueue(ctx, zkAddr, zkAddr, "/queue-bad", "nope", QueueSettings{Producers: 1, Consumers: 1, Items: 1}); err == nil {
		t.Fatal("an unknown mode was accepted")
	}
}
