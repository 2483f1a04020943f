package queue_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/curatorjava"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/queue"
)

// b64 is how the Java driver takes and gives items.
func b64(b []byte) string { return "b:" + base64.StdEncoding.EncodeToString(b) }

// javaItems waits for n "dqitem <id>" events and returns their items.
func javaItems(t *testing.T, java *curatorjava.Driver, id string, n int) []string {
	t.Helper()
	var got []string
	timer := time.NewTimer(testkit.Deadline)
	defer timer.Stop()
	for len(got) < n {
		select {
		case ev, ok := <-java.Events():
			if !ok {
				t.Fatalf("driver exited after %v", got)
			}
			if w, ok := strings.CutPrefix(ev, "dqitem "+id+" "); ok {
				b, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(w, "b:"))
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, string(b))
			}
		case <-timer.C:
			t.Fatalf("Java consumed %v, want %d items", got, n)
		}
	}
	return got
}

// lockModes are the two ways to run a DistributedQueue.
func lockModes(base string) []struct{ name, lock string } {
	return []struct{ name, lock string }{{"no lock path", ""}, {"lock path", base + "/locks"}}
}

func goQueue(c *framework.Client, path, lock string) *queue.Queue {
	if lock == "" {
		return queue.New(c, path)
	}
	return queue.New(c, path, queue.WithLockPath(lock))
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// Curator 5.4 puts (single and multi), Go reads the nodes byte for byte
// and consumes them, in order, with and without a lock path.
func TestInteropJavaPutsGoConsumes(t *testing.T) {
	t.Parallel()
	base := "/interop/" + testkit.Unique(t)
	java := curatorjava.StartDriver(t, zkAddr)
	c := testkit.Connect(t, zkAddr, "")
	for i, m := range lockModes(base) {
		t.Run(m.name, func(t *testing.T) {
			ctx := testkit.Ctx(t)
			path := fmt.Sprintf("%s/q%d", base, i)
			id := fmt.Sprintf("p%d", i)
			java.MustDo(fmt.Sprintf("dqproducer %s %s %s", id, path, orDash(m.lock)))
			java.MustDo(fmt.Sprintf("dqput %s %s", id, b64([]byte("single"))))
			java.MustDo(fmt.Sprintf("dqputmulti %s %s,%s,%s", id, b64([]byte("m1")), b64(nil), b64([]byte("m3"))))
			java.MustDo("dqclose " + id)

			names := items(t, c, path, "")
			if len(names) != 2 || !itemName.MatchString(names[0]) || !itemName.MatchString(names[1]) {
				t.Fatalf("Curator's nodes: %v, want two queue-<seq>", names)
			}
			for j, want := range [][][]byte{{[]byte("single")}, {[]byte("m1"), {}, []byte("m3")}} {
				data, st, err := c.Get(ctx, path+"/"+names[j])
				if err != nil {
					t.Fatal(err)
				}
				if enc := queue.EncodeItems(want); string(data) != string(enc) || st.EphemeralOwner != 0 {
					t.Fatalf("Curator wrote %x, we frame %x", data, enc)
				}
			}
			k := consume(t, goQueue(c, path, m.lock), nil)
			var got []string
			for range 4 {
				got = append(got, string(k.next(t).Data))
			}
			if fmt.Sprint(got) != "[single m1  m3]" {
				t.Fatalf("Go consumed %q", got)
			}
			testkit.Eventually(t, "the queue emptied", func() bool { return len(testkit.Children(t, c, path)) == 0 })
			if m.lock != "" && len(testkit.Children(t, c, m.lock)) != 0 {
				t.Fatalf("lock nodes left: %v", testkit.Children(t, c, m.lock))
			}
		})
	}
}

// Go puts (single and multi), Curator 5.4's consumer gets every item, in
// order, with and without a lock path.
func TestInteropGoPutsJavaConsumes(t *testing.T) {
	t.Parallel()
	base := "/interop/" + testkit.Unique(t)
	java := curatorjava.StartDriver(t, zkAddr)
	c := testkit.Connect(t, zkAddr, "")
	for i, m := range lockModes(base) {
		t.Run(m.name, func(t *testing.T) {
			ctx := testkit.Ctx(t)
			path := fmt.Sprintf("%s/q%d", base, i)
			q := goQueue(c, path, m.lock)
			if err := q.Put(ctx, []byte("single")); err != nil {
				t.Fatal(err)
			}
			if err := q.PutMulti(ctx, [][]byte{[]byte("m1"), {}, []byte("m3")}); err != nil {
				t.Fatal(err)
			}
			id := fmt.Sprintf("c%d", i)
			java.MustDo(fmt.Sprintf("dqconsumer %s %s %s ok", id, path, orDash(m.lock)))
			if got := javaItems(t, java, id, 4); fmt.Sprint(got) != "[single m1  m3]" {
				t.Fatalf("Java consumed %q", got)
			}
			testkit.Eventually(t, "the queue emptied", func() bool { return len(testkit.Children(t, c, path)) == 0 })
			java.MustDo("dqclose " + id)
		})
	}
}

// Go and Curator consumers share one queue in lock-safety mode: the lock
// node Go makes is Curator's ("<lockPath>/<item>", EPHEMERAL), Curator
// passes an item Go holds by, and every item is consumed exactly once.
func TestInteropLockModeShared(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t)
	base := "/interop/" + testkit.Unique(t)
	path, lock := base+"/q", base+"/locks"
	java := curatorjava.StartDriver(t, zkAddr)
	c := testkit.Connect(t, zkAddr, "")
	q := queue.New(c, path, queue.WithLockPath(lock))
	if err := q.Put(ctx, []byte("held")); err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	k := consume(t, q, func(ctx context.Context, it queue.Item) error {
		if string(it.Data) == "held" {
			select {
			case <-release:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return nil
	})
	held := k.next(t)
	_, st, err := c.Get(ctx, lock+"/"+held.Name)
	if err != nil || st.EphemeralOwner != c.SessionID() {
		t.Fatalf("lock node %s/%s: %+v, %v; want ours, ephemeral", lock, held.Name, st, err)
	}
	java.MustDo(fmt.Sprintf("dqconsumer j %s %s ok", path, lock))
	const n = 20
	for i := range n {
		if err := q.Put(ctx, []byte(fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
	}
	testkit.Eventually(t, "all but the held item consumed", func() bool { return len(testkit.Children(t, c, path)) == 1 })
	close(release)
	// Curator deletes its lock node after the item, so wait for both.
	testkit.Eventually(t, "the queue and its locks emptied", func() bool {
		return len(testkit.Children(t, c, path)) == 0 && len(testkit.Children(t, c, lock)) == 0
	})
	java.MustDo("dqclose j")
	seen := map[string]int{"held": 1} // taken from k.items above
	goItems := drain(k.items)
	for _, d := range goItems {
		seen[string(d.Data)]++
	}
	for _, d := range javaItems(t, java, "j", n-len(goItems)) {
		seen[d]++
	}
	// dqclose answered after every event Java wrote before it.
	for _, ev := range drain(java.Events()) {
		if strings.HasPrefix(ev, "dqitem j ") {
			t.Errorf("Java consumed one more: %s", ev)
		}
	}
	if len(seen) != n+1 {
		t.Fatalf("consumed %d distinct items, want %d: %v", len(seen), n+1, seen)
	}
	for d, times := range seen {
		if times != 1 {
			t.Errorf("item %q consumed %d times", d, times)
		}
	}
}

// Curator's SimpleDistributedQueue and ours on one path, both ways: raw
// bytes in "qn-<seq>" nodes.
func TestInteropSimple(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t)
	path := "/interop/" + testkit.Unique(t) + "/sq"
	java := curatorjava.StartDriver(t, zkAddr)
	c := testkit.Connect(t, zkAddr, "")
	s := queue.NewSimple(c, path)
	java.MustDo("sq j " + path)
	java.MustDo("sqoffer j " + b64([]byte("from java")))
	java.MustDo("sqoffer j " + b64(nil))
	names := items(t, c, path, "")
	if len(names) != 2 || !strings.HasPrefix(names[0], "qn-") || len(names[0]) != 13 {
		t.Fatalf("Curator's nodes: %v", names)
	}
	if data, _, err := c.Get(ctx, path+"/"+names[0]); err != nil || string(data) != "from java" {
		t.Fatalf("raw node = %q, %v", data, err)
	}
	if data, ok, err := s.Peek(ctx); err != nil || !ok || string(data) != "from java" {
		t.Fatalf("Peek = %q, %v, %v", data, ok, err)
	}
	if data, err := s.Take(ctx); err != nil || string(data) != "from java" {
		t.Fatalf("Take = %q, %v", data, err)
	}
	if data, ok, err := s.Poll(ctx); err != nil || !ok || len(data) != 0 {
		t.Fatalf("Poll = %q, %v, %v; want the empty item", data, ok, err)
	}
	if _, ok, err := s.Poll(ctx); err != nil || ok {
		t.Fatalf("Poll of an empty queue = %v, %v", ok, err)
	}

	for _, d := range []string{"from go", ""} {
		if err := s.Offer(ctx, []byte(d)); err != nil {
			t.Fatal(err)
		}
	}
	if got := java.MustDo("sqpeek j"); got != b64([]byte("from go")) {
		t.Fatalf("Java peek = %s", got)
	}
	if got := java.MustDo("sqtake j 10000"); got != b64([]byte("from go")) {
		t.Fatalf("Java take = %s", got)
	}
	if got := java.MustDo("sqpoll j"); got != b64(nil) {
		t.Fatalf("Java poll = %s, want the empty item", got)
	}
	if got := java.MustDo("sqpoll j"); got != "none" {
		t.Fatalf("Java poll of an empty queue = %s", got)
	}
}

func drain[T any](ch <-chan T) []T {
	var out []T
	for {
		select {
		case v := <-ch:
			out = append(out, v)
		default:
			return out
		}
	}
}

// A Go consumer passes by the item a Curator consumer holds (Curator's
// lock node), and takes it as soon as that lock goes with the dead Java
// process's session, with nothing else put (Curator's own consumers would
// wait for the next put).
func TestInteropGoTakesOverFromDeadCurator(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t)
	base := "/interop/" + testkit.Unique(t)
	path, lock := base+"/q", base+"/locks"
	java := curatorjava.StartDriverSession(t, zkAddr, 2*time.Second)
	c := testkit.Connect(t, zkAddr, "")
	q := queue.New(c, path, queue.WithLockPath(lock))
	if err := q.Put(ctx, []byte("job")); err != nil {
		t.Fatal(err)
	}
	java.MustDo(fmt.Sprintf("dqconsumer j %s %s hold", path, lock))
	javaItems(t, java, "j", 1)
	names := items(t, c, lock, "")
	if len(names) != 1 {
		t.Fatalf("Curator's lock nodes: %v", names)
	}
	passed := make(chan string, 10)
	queue.OnPass(q, func(name string) { passed <- name })
	k := consume(t, q, nil)
	select {
	case n := <-passed:
		if n != names[0] {
			t.Fatalf("passed %s by, want %s", n, names[0])
		}
	case it := <-k.items:
		t.Fatalf("Go took %s while Curator held it", it.Name)
	case <-time.After(testkit.Deadline):
		t.Fatal("the Go consumer never looked at the held item")
	}
	java.MustDo("dqhalt")
	if it := k.next(t); string(it.Data) != "job" || it.Name != names[0] {
		t.Fatalf("took %s %q", it.Name, it.Data)
	}
	testkit.Eventually(t, "the queue emptied", func() bool { return len(testkit.Children(t, c, path)) == 0 })
}

// Measured on the jar: Curator 5.4's lock-mode consumer, failing on the
// second item of a putMulti node, requeues the whole node, so the first
// item is consumed twice (TestRequeueKeepsWhatSucceeded pins that ours
// does not).
func TestInteropCuratorRequeuesWholeNode(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t)
	base := "/interop/" + testkit.Unique(t)
	path, lock := base+"/q", base+"/locks"
	java := curatorjava.StartDriver(t, zkAddr)
	c := testkit.Connect(t, zkAddr, "")
	if err := queue.New(c, path).PutMulti(ctx, [][]byte{[]byte("a"), []byte("b"), []byte("c")}); err != nil {
		t.Fatal(err)
	}
	java.MustDo(fmt.Sprintf("dqconsumer j %s %s failonce:%s", path, lock, b64([]byte("b"))))
	if got := javaItems(t, java, "j", 5); fmt.Sprint(got) != "[a b a b c]" {
		t.Fatalf("Curator consumed %q", got)
	}
	testkit.Eventually(t, "the queue emptied", func() bool { return len(testkit.Children(t, c, path)) == 0 })
}
