package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/queue"
)

// holdItem runs a lock-mode consumer on q that takes the queue's first
// item and holds it until the test ends; it returns the item.
func holdItem(t *testing.T, q *queue.Queue) queue.Item {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	got := make(chan queue.Item, 1)
	done := make(chan error, 1)
	go func() {
		done <- q.Consume(ctx, func(ctx context.Context, it queue.Item) error {
			got <- it
			<-ctx.Done()
			return ctx.Err()
		})
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(testkit.Deadline):
			t.Error("the consumer did not stop")
		}
	})
	select {
	case it := <-got:
		return it
	case err := <-done:
		t.Fatalf("Consume returned %v", err)
	case <-time.After(testkit.Deadline):
		t.Fatal("the consumer took no item")
	}
	return queue.Item{}
}

type queueLsJSON struct {
	Path             string  `json:"path"`
	Kind             string  `json:"kind"`
	Nodes            int     `json:"nodes"`
	Items            int     `json:"items"`
	Corrupt          int     `json:"corrupt"`
	OldestAgeSeconds float64 `json:"oldestAgeSeconds"`
	LockPath         string  `json:"lockPath"`
	Locked           []struct {
		Item, Session, Host, Connected string
	} `json:"locked"`
	Sessions string `json:"sessions"`
}

func (e *env) queueLs(args ...string) queueLsJSON {
	e.t.Helper()
	r := e.run(append([]string{"--json", "queue", "ls"}, args...)...).ok(e.t)
	var doc queueLsJSON
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		e.t.Fatalf("bad JSON %v:\n%s", err, r.stdout)
	}
	return doc
}

// queue ls: the kind read from the names, the depth in nodes and items,
// the oldest item's age, and who holds the locked items (session, host,
// connected), the lock path found beside the queue or given.
func TestQueueLs(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := testkit.Ctx(t)
	consumer := e.connect()
	q := queue.New(consumer, "/jobs", queue.WithLockPath("/jobs-locks"))
	for _, d := range []string{"a", "b"} {
		if err := q.Put(ctx, []byte(d)); err != nil {
			t.Fatal(err)
		}
	}
	if err := q.PutMulti(ctx, [][]byte{[]byte("c"), []byte("d"), []byte("e")}); err != nil {
		t.Fatal(err)
	}
	held := holdItem(t, q)

	doc := e.queueLs("/jobs")
	if doc.Kind != "queue" || doc.Nodes != 3 || doc.Items != 5 || doc.LockPath != "/jobs-locks" || doc.OldestAgeSeconds <= 0 {
		t.Fatalf("queue ls: %+v", doc)
	}
	l := only(t, doc.Locked, "locked items")
	if l.Item != held.Name || l.Session != hex(consumer.SessionID()) || l.Connected != "yes" || l.Host != string(consumer.DefaultData()) {
		t.Fatalf("locked %+v; want %s held by %s (%s), connected", l, held.Name, hex(consumer.SessionID()), consumer.DefaultData())
	}
	if doc.Sessions != "complete" {
		t.Fatalf("sessions %q", doc.Sessions)
	}
	if got := e.queueLs("/jobs", "--lock-path", "/jobs-locks"); len(got.Locked) != 1 {
		t.Fatalf("with --lock-path: %+v", got)
	}
	out := e.run("queue", "ls", "/jobs").ok(t).stdout
	if !strings.HasPrefix(out, "/jobs  queue  5 items in 3 nodes, oldest ") ||
		!strings.Contains(out, "1 locked (lock path /jobs-locks)") || !strings.Contains(out, held.Name+"  "+hex(consumer.SessionID())) {
		t.Fatalf("queue ls:\n%s", out)
	}

	// The variants and the simple queue, named by their item names.
	if err := queue.NewID(e.client, "/ids").PutID(ctx, "order-7", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := queue.NewPriority(e.client, "/prio").Put(ctx, []byte("x"), -3); err != nil {
		t.Fatal(err)
	}
	if err := queue.NewDelay(e.client, "/later").Put(ctx, []byte("x"), time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := queue.NewSimple(e.client, "/simple").Offer(ctx, []byte("x")); err != nil {
		t.Fatal(err)
	}
	if _, err := e.client.Create(ctx, "/idle", nil); err != nil {
		t.Fatal(err)
	}
	for path, kind := range map[string]string{"/ids": "id-queue", "/prio": "priority-queue", "/later": "delay-queue", "/simple": "simple-queue", "/idle": "empty"} {
		if d := e.queueLs(path); d.Kind != kind || d.LockPath != "" || len(d.Locked) != 0 {
			t.Errorf("queue ls %s: %+v, want kind %s", path, d, kind)
		}
	}
	if out := e.run("queue", "ls", "/idle").ok(t).stdout; out != "/idle  empty  0 items\n" {
		t.Fatalf("queue ls of an empty node: %q", out)
	}
	if out := e.run("queue", "ls", "/ids").ok(t).stdout; !strings.Contains(out, "lock path unknown (see --lock-path)") {
		t.Fatalf("queue ls without a lock path: %q", out)
	}
}

// queue peek shows the first -n items in the order consumers take them,
// with their id, priority or time, who holds them, and their data; a node
// that is not Curator's framing is shown as corrupt, not skipped.
func TestQueuePeek(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := testkit.Ctx(t)
	pq := queue.NewPriority(e.client, "/prio")
	for _, p := range []struct {
		data string
		prio int
	}{{"low", 9}, {"urgent", -1}, {"normal", 0}} {
		if err := pq.Put(ctx, []byte(p.data), p.prio); err != nil {
			t.Fatal(err)
		}
	}
	if err := pq.PutMulti(ctx, [][]byte{[]byte("m1"), {0xff, 0xfe}}, 0); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Kind  string `json:"kind"`
		Total int    `json:"total"`
		Items []struct {
			Node     string `json:"node"`
			Index    int    `json:"index"`
			Count    int    `json:"count"`
			Data     []byte `json:"data"`
			Text     *string
			Priority *int32
			ID       *string
			Due      *time.Time
			Corrupt  bool
			Locked   *struct{ Session string }
		} `json:"items"`
	}
	peek := func(args ...string) {
		t.Helper()
		r := e.run(append([]string{"--json", "queue", "peek"}, args...)...).ok(t)
		doc.Items = nil
		if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
			t.Fatalf("bad JSON %v:\n%s", err, r.stdout)
		}
	}
	peek("/prio", "-n", "4")
	if doc.Kind != "priority-queue" || doc.Total != 5 || len(doc.Items) != 4 {
		t.Fatalf("peek: %+v", doc)
	}
	var got []string
	for _, it := range doc.Items {
		got = append(got, string(it.Data)+"/"+string(rune('0'+it.Index))+"/"+string(rune('0'+it.Count))+"@"+string(rune('0'+*it.Priority+1)))
	}
	if strings.Join(got, " ") != "urgent/0/1@0 normal/0/1@1 m1/0/2@1 \xff\xfe/1/2@1" {
		t.Fatalf("peek order %q", got)
	}
	if doc.Items[3].Text != nil || doc.Items[2].Text == nil || *doc.Items[2].Text != "m1" {
		t.Fatalf("text of items: %+v", doc.Items)
	}
	out := e.run("queue", "peek", "/prio", "-n", "2").ok(t).stdout
	if !strings.HasPrefix(out, "/prio  priority-queue  2 of 5 items\n") || !strings.Contains(out, "PRIORITY") || !strings.Contains(out, `"urgent"`) || strings.Contains(out, `"m1"`) {
		t.Fatalf("peek:\n%s", out)
	}

	// Lock mode: the held item says by whom.
	consumer := e.connect()
	iq := queue.New(consumer, "/jobs", queue.WithLockPath("/jobs-locks"))
	if err := iq.Put(ctx, []byte("first")); err != nil {
		t.Fatal(err)
	}
	held := holdItem(t, iq)
	if _, err := e.client.Create(ctx, "/jobs/queue-", []byte("garbage"), framework.WithMode(framework.PersistentSequential)); err != nil {
		t.Fatal(err)
	}
	peek("/jobs")
	if len(doc.Items) != 2 || doc.Items[0].Node != held.Name || doc.Items[0].Locked == nil || doc.Items[0].Locked.Session != hex(consumer.SessionID()) ||
		!doc.Items[1].Corrupt || string(doc.Items[1].Data) != "garbage" || doc.Items[1].Locked != nil {
		t.Fatalf("peek of a lock-mode queue: %+v", doc.Items)
	}
	if out := e.run("queue", "peek", "/jobs").ok(t).stdout; !strings.Contains(out, "(corrupt: 7 bytes") || !strings.Contains(out, hex(consumer.SessionID())) {
		t.Fatalf("peek:\n%s", out)
	}

	// The id queue's ids, the delay queue's times, the simple queue's raw bytes.
	if err := queue.NewID(e.client, "/ids").PutID(ctx, "a/b", []byte("x")); err != nil {
		t.Fatal(err)
	}
	peek("/ids")
	if it := only(t, doc.Items, "items"); it.ID == nil || *it.ID != "a_b" {
		t.Fatalf("id item %+v", it)
	}
	due := time.UnixMilli(time.Now().Add(time.Hour).UnixMilli())
	if err := queue.NewDelay(e.client, "/later").Put(ctx, []byte("x"), due); err != nil {
		t.Fatal(err)
	}
	peek("/later")
	if it := only(t, doc.Items, "items"); it.Due == nil || !it.Due.Equal(due) {
		t.Fatalf("delay item %+v, want due %v", it, due)
	}
	if out := e.run("queue", "peek", "/later").ok(t).stdout; !strings.Contains(out, "DUE") || !strings.Contains(out, "in 59m") {
		t.Fatalf("peek of a delay queue:\n%s", out)
	}
	if err := queue.NewSimple(e.client, "/simple").Offer(ctx, []byte("raw")); err != nil {
		t.Fatal(err)
	}
	peek("/simple")
	if it := only(t, doc.Items, "items"); string(it.Data) != "raw" || doc.Kind != "simple-queue" {
		t.Fatalf("simple item %+v", it)
	}

	if r := e.run("queue", "peek", "/prio", "-n", "0"); r.code != exitUsage {
		t.Fatalf("-n 0: exit %d, %q", r.code, r.stderr)
	}
}

// queue ls and peek refuse what is no queue (exit 65), and locks ls and
// exec refuse every kind of queue: a lock node beside queue items would
// exclude nobody.
func TestQueueWrongKind(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := testkit.Ctx(t)
	if err := queue.New(e.client, "/q").Put(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if err := queue.NewID(e.client, "/iq").PutID(ctx, "x", nil); err != nil {
		t.Fatal(err)
	}
	if err := queue.NewPriority(e.client, "/pq").Put(ctx, nil, 3); err != nil {
		t.Fatal(err)
	}
	if err := queue.NewDelay(e.client, "/dq").Put(ctx, nil, time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := queue.NewSimple(e.client, "/sq").Offer(ctx, nil); err != nil {
		t.Fatal(err)
	}
	lq := queue.New(e.connect(), "/lq", queue.WithLockPath("/lq-locks"))
	if err := lq.Put(ctx, nil); err != nil {
		t.Fatal(err)
	}
	held := holdItem(t, lq)
	if _, err := e.client.Create(ctx, "/plain/a", nil, framework.CreatingParents()); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"locks", "ls", "/q"}, "/q is a distributed queue (1 item), not a lock"},
		{[]string{"locks", "ls", "/iq"}, "/iq is a distributed queue (1 item), not a lock"},
		{[]string{"locks", "ls", "/pq"}, "/pq is a distributed queue (1 item), not a lock"},
		{[]string{"locks", "ls", "/dq"}, "/dq is a distributed queue (1 item), not a lock"},
		{[]string{"locks", "ls", "/sq"}, "/sq is a simple distributed queue (1 item), not a lock"},
		{[]string{"locks", "ls", "/lq-locks"}, "/lq-locks is a distributed queue's lock path (1 item), not a lock"},
		{[]string{"exec", "/pq", "--", "true"}, "/pq is a distributed queue (1 item), not a mutex"},
		{[]string{"exec", "/dq", "--", "true"}, "/dq is a distributed queue (1 item), not a mutex"},
		{[]string{"exec", "/iq", "--", "true"}, "/iq is a distributed queue (1 item), not a mutex"},
		{[]string{"exec", "/sq", "--", "true"}, "/sq is a simple distributed queue (1 item), not a mutex"},
		{[]string{"queue", "ls", "/plain"}, "/plain is no recipe (children: a), not a queue"},
		{[]string{"queue", "ls", "/lq-locks"}, "/lq-locks is a distributed queue's lock path (1 item), not a queue"},
		{[]string{"queue", "peek", "/lq-locks/" + held.Name}, "is an item of the distributed queue's lock path at /lq-locks, not a queue"},
		{[]string{"queue", "ls", "/q/" + only(t, testkit.Children(t, e.client, "/q"), "items")}, "is an item of the distributed queue at /q, not a queue"},
	} {
		r := e.run(tc.args...)
		if r.code != exitLayout || r.stdout != "" || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%v: exit %d (want %d), stdout %q, stderr %q (want %q)", tc.args, r.code, exitLayout, r.stdout, r.stderr, tc.want)
		}
	}
	if r := e.run("queue", "ls", "/missing"); r.code != exitFailure || !strings.Contains(r.stderr, "/missing: no such node") {
		t.Fatalf("queue ls of a missing node: exit %d, %q", r.code, r.stderr)
	}
}
