package watchq

import (
	"fmt"
	"slices"
	"testing"
)

// ev is a test event: a name, a value, and the flags the combine
// functions set.
type ev struct {
	name      string
	v         int
	coalesced bool
	merged    int // how many events a merged one stands for
}

func newQueue() *Queue[ev] {
	return New(func(old, cur ev) ev {
		cur.coalesced = true
		return cur
	}, func(old, cur ev) ev {
		old.merged++
		old.v = max(old.v, cur.v)
		return old
	})
}

// op is one call on the queue: add (the default), merge or mark.
type op struct {
	kind string
	e    ev
}

func add(name string, v int) op   { return op{"add", ev{name: name, v: v}} }
func merge(name string, v int) op { return op{"merge", ev{name: name, v: v}} }
func mark(v int) op               { return op{"mark", ev{name: "mark", v: v}} }

func drain(q *Queue[ev]) []ev {
	var out []ev
	for {
		e, _, ok := q.Next()
		if !ok {
			return out
		}
		out = append(out, e)
	}
}

func TestQueue(t *testing.T) {
	tests := []struct {
		name string
		in   []op
		want []ev
	}{
		{"in order", []op{add("/a", 1), add("/b", 2)},
			[]ev{{name: "/a", v: 1}, {name: "/b", v: 2}}},
		{"coalesced at the last's place", []op{add("/a", 1), add("/b", 2), add("/a", 3)},
			[]ev{{name: "/b", v: 2}, {name: "/a", v: 3, coalesced: true}}},
		{"deepest first kept", []op{add("/p", 1), add("/p/c", 2), add("/p", 3)},
			[]ev{{name: "/p/c", v: 2}, {name: "/p", v: 3, coalesced: true}}},
		{"merged in place", []op{merge("r", 1), add("/a", 2), merge("r", 5)},
			[]ev{{name: "r", v: 5, merged: 1}, {name: "/a", v: 2}}},
		{"a mark is a barrier", []op{merge("r", 1), add("/a", 2), mark(3), add("/a", 4), merge("r", 5)},
			[]ev{{name: "r", v: 5, merged: 1}, {name: "/a", v: 2}, {name: "mark", v: 3}, {name: "/a", v: 4}}},
		{"coalesces again after a mark", []op{mark(1), add("/a", 2), add("/a", 3)},
			[]ev{{name: "mark", v: 1}, {name: "/a", v: 3, coalesced: true}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := newQueue()
			for _, o := range tt.in {
				switch o.kind {
				case "add":
					q.Add(o.e.name, o.e)
				case "merge":
					q.Merge(o.e.name, o.e)
				case "mark":
					q.Mark(o.e)
				}
			}
			if got := drain(q); !slices.Equal(got, tt.want) {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
			if q.Len() != 0 || q.Places() != 0 {
				t.Fatalf("drained, %d pending at %d places", q.Len(), q.Places())
			}
		})
	}
}

// A mark's received channel comes back with it, and only with it.
func TestMarkReceived(t *testing.T) {
	q := newQueue()
	q.Add("/a", ev{name: "/a"})
	received := q.Mark(ev{name: "mark"})
	if _, r, _ := q.Next(); r != nil {
		t.Fatal("an added event came with a received channel")
	}
	if e, r, _ := q.Next(); e.name != "mark" || r != received {
		t.Fatalf("mark %+v came with %v, want %v", e, r, received)
	}
}

// An event taken is gone: the next of its name is not coalesced with it.
func TestTaken(t *testing.T) {
	q := newQueue()
	q.Add("/a", ev{name: "/a", v: 1})
	q.Next()
	q.Add("/a", ev{name: "/a", v: 2})
	if got := drain(q); !slices.Equal(got, []ev{{name: "/a", v: 2}}) {
		t.Fatalf("got %+v", got)
	}
}

// Every queued event wakes the consumer; wakes do not pile up.
func TestWake(t *testing.T) {
	q := newQueue()
	q.Add("/a", ev{})
	q.Merge("r", ev{})
	q.Mark(ev{})
	select {
	case <-q.Wake():
	default:
		t.Fatal("no wake after queueing")
	}
	select {
	case <-q.Wake():
		t.Fatal("a second wake pending")
	default:
	}
}

// Churn on a few names with nobody taking: the queue stays within twice
// the pending events and 64, and Has sees the names since the last mark.
func TestBounded(t *testing.T) {
	q := newQueue()
	for i := range 10000 {
		q.Add(fmt.Sprintf("/p%d", i%3), ev{v: i})
	}
	if q.Len() != 3 || q.Places() > 2*3+64 {
		t.Fatalf("%d pending, %d places after churn on 3 names", q.Len(), q.Places())
	}
	if !q.Has("/p0") || q.Has("/p9") {
		t.Fatal("Has does not see the pending names")
	}
	q.Mark(ev{})
	if q.Has("/p0") {
		t.Fatal("Has sees a name added before the last mark")
	}
}

// Benchmark of the producer's path: one coalescing add.
func BenchmarkAdd(b *testing.B) {
	q := newQueue()
	b.ReportAllocs()
	for i := range b.N {
		q.Add("/p", ev{v: i})
	}
}
