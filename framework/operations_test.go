package framework

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

func TestCreateModes(t *testing.T) {
	ns := newNamespace(t)
	c := connectNS(t, ns)
	other := connectNS(t, ns)
	ctx := testCtx(t)

	t.Run("persistent and ephemeral", func(t *testing.T) {
		p, err := c.Create(ctx, "/persistent", []byte("p"))
		if err != nil || p != "/persistent" {
			t.Fatalf("Create = %q, %v", p, err)
		}
		st, err := other.Exists(ctx, p)
		if err != nil || st == nil || st.EphemeralOwner != 0 {
			t.Fatalf("persistent node: %+v, %v", st, err)
		}
		e, err := c.Create(ctx, "/ephemeral", nil, WithMode(Ephemeral))
		if err != nil || e != "/ephemeral" {
			t.Fatalf("Create = %q, %v", e, err)
		}
		st, err = other.Exists(ctx, e)
		if err != nil || st == nil || st.EphemeralOwner != c.SessionID() {
			t.Fatalf("ephemeral node: %+v, %v; want owner %#x", st, err, c.SessionID())
		}
		if _, err := c.Create(ctx, "/persistent", nil); !errors.Is(err, zk.ErrNodeExists) {
			t.Fatalf("second Create = %v, want zk.ErrNodeExists", err)
		}
		if _, err := c.Create(ctx, "/ephemeral/child", nil); !errors.Is(err, zk.ErrNoChildrenForEphemerals) {
			t.Fatalf("child of an ephemeral = %v, want zk.ErrNoChildrenForEphemerals", err)
		}
	})

	t.Run("default data", func(t *testing.T) {
		if _, err := c.Create(ctx, "/default", nil); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Create(ctx, "/empty", []byte{}); err != nil {
			t.Fatal(err)
		}
		if data, _, err := c.Get(ctx, "/default"); err != nil || string(data) != string(c.DefaultData()) {
			t.Fatalf("nil data: got %q, %v; want the default %q", data, err, c.DefaultData())
		}
		if data, _, err := c.Get(ctx, "/empty"); err != nil || len(data) != 0 {
			t.Fatalf("empty data: got %q, %v", data, err)
		}
		custom := connectNS(t, ns, WithDefaultData([]byte("mine")))
		if _, err := custom.Create(ctx, "/custom", nil); err != nil {
			t.Fatal(err)
		}
		if data, _, err := c.Get(ctx, "/custom"); err != nil || string(data) != "mine" {
			t.Fatalf("WithDefaultData: got %q, %v", data, err)
		}
	})

	t.Run("sequential numbering", func(t *testing.T) {
		if _, err := c.Create(ctx, "/seq", nil); err != nil {
			t.Fatal(err)
		}
		for i, m := range []Mode{PersistentSequential, EphemeralSequential, PersistentSequential} {
			p, err := c.Create(ctx, "/seq/n-", nil, WithMode(m))
			if err != nil {
				t.Fatal(err)
			}
			if want := fmt.Sprintf("/seq/n-%010d", i); p != want {
				t.Fatalf("sequential create %d = %q, want %q", i, p, want)
			}
		}
		kids, _, err := c.Children(ctx, "/seq")
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(kids)
		if want := []string{"n-0000000000", "n-0000000001", "n-0000000002"}; !slices.Equal(kids, want) {
			t.Fatalf("children = %q, want %q", kids, want)
		}
		// Another name under the same parent takes the next number: the
		// counter is the parent's.
		p, err := c.Create(ctx, "/seq/x", nil, WithMode(PersistentSequential))
		if err != nil || p != "/seq/x0000000003" {
			t.Fatalf("fourth sequential create = %q, %v", p, err)
		}
	})

	t.Run("container", func(t *testing.T) {
		box, err := c.Create(ctx, "/box", nil, WithMode(Container))
		if err != nil || box != "/box" {
			t.Fatalf("Create container = %q, %v", box, err)
		}
		// Servers report ephemeralOwner 0 for containers and TTL nodes
		// alike, so the mode shows only in what the server does.
		if st, err := other.Exists(ctx, box); err != nil || st == nil {
			t.Fatalf("container: %+v, %v", st, err)
		}
		if _, err := c.Create(ctx, "/box/item", nil); err != nil {
			t.Fatal(err)
		}
		if err := c.Delete(ctx, "/box/item"); err != nil {
			t.Fatal(err)
		}
		// The server reaps empty containers every second (zktest's
		// configuration).
		eventually(t, testTimeout, "empty container deleted by the server", func() (bool, error) {
			st, err := other.Exists(ctx, box)
			return err == nil && st == nil, err
		})
	})

	t.Run("TTL", func(t *testing.T) {
		p, err := c.Create(ctx, "/ttl", []byte("t"), WithMode(PersistentWithTTL), WithTTL(time.Hour))
		if err != nil || p != "/ttl" {
			t.Fatalf("Create TTL node = %q, %v", p, err)
		}
		st, err := other.Exists(ctx, p)
		if err != nil || st == nil {
			t.Fatalf("TTL node: %+v, %v", st, err)
		}
		if _, err := c.Create(ctx, "/ttls", nil); err != nil {
			t.Fatal(err)
		}
		sp, err := c.Create(ctx, "/ttls/t-", nil, WithMode(PersistentSequentialWithTTL), WithTTL(time.Hour))
		if err != nil || sp != "/ttls/t-0000000000" {
			t.Fatalf("Create sequential TTL node = %q, %v", sp, err)
		}
		// A short TTL: the server removes the childless node.
		short, err := c.Create(ctx, "/short", nil, WithMode(PersistentWithTTL), WithTTL(200*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		eventually(t, testTimeout, "TTL node deleted by the server", func() (bool, error) {
			st, err := other.Exists(ctx, short)
			return err == nil && st == nil, err
		})
	})
}

func TestCreatingParents(t *testing.T) {
	ns := newNamespace(t)
	c := connectNS(t, ns)
	ctx := testCtx(t)

	if _, err := c.Create(ctx, "/no/parent", nil); !errors.Is(err, zk.ErrNoNode) {
		t.Fatalf("Create without parents = %v, want zk.ErrNoNode", err)
	}
	p, err := c.Create(ctx, "/p1/p2/leaf", []byte("leaf"), CreatingParents())
	if err != nil || p != "/p1/p2/leaf" {
		t.Fatalf("CreatingParents = %q, %v", p, err)
	}
	for _, parent := range []string{"/p1", "/p1/p2"} {
		data, st, err := c.Get(ctx, parent)
		if err != nil || st.EphemeralOwner != 0 || len(data) != 0 {
			t.Fatalf("parent %s: data %q stat %+v err %v; want an empty persistent node", parent, data, st, err)
		}
	}
	// Some parents exist already.
	if _, err := c.Create(ctx, "/p1/p2/p3/leaf", nil, CreatingParents()); err != nil {
		t.Fatal(err)
	}

	p, err = c.Create(ctx, "/c1/c2/leaf", nil, CreatingParentContainers(), WithMode(EphemeralSequential))
	if err != nil || !hasSeq(p, "/c1/c2/leaf") {
		t.Fatalf("CreatingParentContainers = %q, %v", p, err)
	}
	// Emptied, container parents go and persistent ones stay; a later
	// create with parents makes the containers again.
	if err := c.Delete(ctx, p); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, "/p1/p2/p3/leaf"); err != nil {
		t.Fatal(err)
	}
	other := connectNS(t, ns)
	eventually(t, testTimeout, "empty parent containers deleted", func() (bool, error) {
		st, err := other.Exists(ctx, "/c1")
		return err == nil && st == nil, err
	})
	if st, err := other.Exists(ctx, "/p1/p2/p3"); err != nil || st == nil {
		t.Fatalf("an emptied persistent parent went with the containers: %v, %v", st, err)
	}
	if _, err := c.Create(ctx, "/c1/c2/again", nil, CreatingParentContainers()); err != nil {
		t.Fatalf("Create after the containers went: %v", err)
	}
}

func TestDeleteOptions(t *testing.T) {
	ns := newNamespace(t)
	c := connectNS(t, ns)
	ctx := testCtx(t)

	t.Run("version", func(t *testing.T) {
		if _, err := c.Create(ctx, "/v", nil); err != nil {
			t.Fatal(err)
		}
		st, err := c.Set(ctx, "/v", []byte("1"), 0)
		if err != nil || st.Version != 1 {
			t.Fatalf("Set = %+v, %v", st, err)
		}
		if _, err := c.Set(ctx, "/v", []byte("2"), 0); !errors.Is(err, zk.ErrBadVersion) {
			t.Fatalf("Set with a stale version = %v, want zk.ErrBadVersion", err)
		}
		if err := c.Delete(ctx, "/v", WithVersion(0)); !errors.Is(err, zk.ErrBadVersion) {
			t.Fatalf("Delete with a stale version = %v, want zk.ErrBadVersion", err)
		}
		if st, err := c.Exists(ctx, "/v"); err != nil || st == nil {
			t.Fatalf("node gone after a refused delete: %v, %v", st, err)
		}
		if err := c.Delete(ctx, "/v", WithVersion(1)); err != nil {
			t.Fatalf("Delete with the right version: %v", err)
		}
		if err := c.Delete(ctx, "/v"); !errors.Is(err, zk.ErrNoNode) {
			t.Fatalf("Delete of a deleted node = %v, want zk.ErrNoNode", err)
		}
	})

	t.Run("children", func(t *testing.T) {
		for _, p := range []string{"/tree/a/x", "/tree/a/y", "/tree/b", "/tree/c/d/e"} {
			if _, err := c.Create(ctx, p, nil, CreatingParents()); err != nil {
				t.Fatal(err)
			}
		}
		if err := c.Delete(ctx, "/tree"); !errors.Is(err, zk.ErrNotEmpty) {
			t.Fatalf("Delete of a non-empty node = %v, want zk.ErrNotEmpty", err)
		}
		if err := c.Delete(ctx, "/tree", DeletingChildren()); err != nil {
			t.Fatalf("DeletingChildren: %v", err)
		}
		if st, err := c.Exists(ctx, "/tree"); err != nil || st != nil {
			t.Fatalf("tree still there: %v, %v", st, err)
		}
	})

	t.Run("quietly", func(t *testing.T) {
		if err := c.Delete(ctx, "/absent"); !errors.Is(err, zk.ErrNoNode) {
			t.Fatalf("Delete of a missing node = %v, want zk.ErrNoNode", err)
		}
		if err := c.Delete(ctx, "/absent", Quietly()); err != nil {
			t.Fatalf("Quietly: %v", err)
		}
		if err := c.Delete(ctx, "/absent/deeper", Quietly(), DeletingChildren()); err != nil {
			t.Fatalf("Quietly with children: %v", err)
		}
	})
}

func TestReadOperations(t *testing.T) {
	ns := newNamespace(t)
	c := connectNS(t, ns)
	ctx := testCtx(t)
	if _, _, err := c.Get(ctx, "/missing"); !errors.Is(err, zk.ErrNoNode) {
		t.Fatalf("Get of a missing node = %v, want zk.ErrNoNode", err)
	}
	if _, _, err := c.Children(ctx, "/missing"); !errors.Is(err, zk.ErrNoNode) {
		t.Fatalf("Children of a missing node = %v, want zk.ErrNoNode", err)
	}
	if _, err := c.Set(ctx, "/missing", nil, -1); !errors.Is(err, zk.ErrNoNode) {
		t.Fatalf("Set of a missing node = %v, want zk.ErrNoNode", err)
	}
	if _, _, _, err := c.GetW(ctx, "/missing"); !errors.Is(err, zk.ErrNoNode) {
		t.Fatalf("GetW of a missing node = %v, want zk.ErrNoNode", err)
	}
	if _, err := c.Create(ctx, "/r", []byte("one")); err != nil {
		t.Fatal(err)
	}
	data, st, err := c.Get(ctx, "/r")
	if err != nil || string(data) != "one" || st.DataLength != 3 {
		t.Fatalf("Get = %q, %+v, %v", data, st, err)
	}
	st2, err := c.Set(ctx, "/r", []byte("two"), st.Version)
	if err != nil || st2.Version != st.Version+1 {
		t.Fatalf("Set = %+v, %v", st2, err)
	}
	// Watches fire once, with the right event.
	_, _, w, err := c.GetW(ctx, "/r")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Set(ctx, "/r", []byte("three"), -1); err != nil {
		t.Fatal(err)
	}
	if ev := waitEvent(t, w, testTimeout, "data watch"); ev.Type != zk.EventNodeDataChanged || ev.Path != "/r" {
		t.Fatalf("event %+v", ev)
	}
	kids, _, cw, err := c.ChildrenW(ctx, "/r")
	if err != nil || len(kids) != 0 {
		t.Fatalf("ChildrenW = %q, %v", kids, err)
	}
	if _, err := c.Create(ctx, "/r/k", nil); err != nil {
		t.Fatal(err)
	}
	if ev := waitEvent(t, cw, testTimeout, "children watch"); ev.Type != zk.EventNodeChildrenChanged || ev.Path != "/r" {
		t.Fatalf("event %+v", ev)
	}
	st, ew, err := c.ExistsW(ctx, "/r/k")
	if err != nil || st == nil {
		t.Fatalf("ExistsW = %+v, %v", st, err)
	}
	if err := c.Delete(ctx, "/r/k"); err != nil {
		t.Fatal(err)
	}
	if ev := waitEvent(t, ew, testTimeout, "exists watch"); ev.Type != zk.EventNodeDeleted || ev.Path != "/r/k" {
		t.Fatalf("event %+v", ev)
	}
}

func TestMulti(t *testing.T) {
	ns := newNamespace(t)
	c := connectNS(t, ns)
	ctx := testCtx(t)
	if _, err := c.Create(ctx, "/base", []byte("0")); err != nil {
		t.Fatal(err)
	}

	// All or nothing: the failing check aborts the create before it.
	_, err := c.Multi(ctx,
		CreateOp("/base/new", []byte("x"), Persistent),
		SetOp("/base", []byte("changed"), -1),
		CheckOp("/base/missing", -1),
	)
	if !errors.Is(err, zk.ErrNoNode) {
		t.Fatalf("Multi with a failing check = %v, want zk.ErrNoNode", err)
	}
	if st, err := c.Exists(ctx, "/base/new"); err != nil || st != nil {
		t.Fatalf("the aborted transaction created a node: %+v, %v", st, err)
	}
	if data, _, err := c.Get(ctx, "/base"); err != nil || string(data) != "0" {
		t.Fatalf("the aborted transaction set data: %q, %v", data, err)
	}
	// A version check that fails.
	_, err = c.Multi(ctx, CheckOp("/base", 5), CreateOp("/base/new", nil, Persistent))
	if !errors.Is(err, zk.ErrBadVersion) {
		t.Fatalf("Multi with a stale version check = %v, want zk.ErrBadVersion", err)
	}
	if st, err := c.Exists(ctx, "/base/new"); err != nil || st != nil {
		t.Fatalf("the aborted transaction created a node: %+v, %v", st, err)
	}

	// All applied.
	res, err := c.Multi(ctx,
		CheckOp("/base", 0),
		CreateOp("/base/new", []byte("x"), Persistent),
		CreateOp("/base/e-", nil, EphemeralSequential),
		SetOp("/base", []byte("1"), 0),
	)
	if err != nil {
		t.Fatalf("Multi: %v", err)
	}
	if res[1].String != "/base/new" || !hasSeq(res[2].String, "/base/e-") {
		t.Fatalf("created paths %q, %q", res[1].String, res[2].String)
	}
	if res[3].Stat == nil || res[3].Stat.Version != 1 {
		t.Fatalf("set result %+v, want version 1", res[3].Stat)
	}
	st, err := c.Exists(ctx, res[2].String)
	if err != nil || st == nil || st.EphemeralOwner != c.SessionID() {
		t.Fatalf("ephemeral from a transaction: %+v, %v", st, err)
	}
	if data, _, err := c.Get(ctx, "/base/new"); err != nil || string(data) != "x" {
		t.Fatalf("Get = %q, %v", data, err)
	}
	if res, err := c.Multi(ctx, DeleteOp("/base/new", -1), DeleteOp(res[2].String, -1)); err != nil || len(res) != 2 {
		t.Fatalf("Multi delete = %+v, %v", res, err)
	}
	if kids, _, err := c.Children(ctx, "/base"); err != nil || len(kids) != 0 {
		t.Fatalf("children after Multi delete = %q, %v", kids, err)
	}
}

// SessionTimeout reports what the server negotiated, which may differ from
// what was asked (zktest allows 400ms to 60s).
func TestSessionTimeoutNegotiated(t *testing.T) {
	tests := []struct {
		asked, want time.Duration
	}{
		{1500 * time.Millisecond, 1500 * time.Millisecond},
		{100 * time.Millisecond, 400 * time.Millisecond},
		{10 * time.Minute, time.Minute},
	}
	for _, tt := range tests {
		t.Run(tt.asked.String(), func(t *testing.T) {
			c := connect(t, server(t).ConnectString(), WithSessionTimeout(tt.asked))
			if got := c.SessionTimeout(); got != tt.want {
				t.Fatalf("SessionTimeout() = %v after asking %v, want %v", got, tt.asked, tt.want)
			}
		})
	}
}

// Close ends the session at once: another client no longer sees its
// ephemeral nodes right after Close returns.
func TestCloseEndsSession(t *testing.T) {
	ns := newNamespace(t)
	c := connectNS(t, ns, WithSessionTimeout(time.Minute))
	other := connectNS(t, ns)
	ctx := testCtx(t)
	p, err := c.Create(ctx, "/eph", nil, WithMode(Ephemeral), CreatingParents())
	if err != nil {
		t.Fatal(err)
	}
	q, err := c.Create(ctx, "/eph-seq-", nil, WithMode(EphemeralSequential), Protected())
	if err != nil {
		t.Fatal(err)
	}
	_, _, w, err := other.GetW(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{p, q} {
		if st, err := other.Exists(ctx, n); err != nil || st != nil {
			t.Fatalf("ephemeral %s still there right after Close: %+v, %v", n, st, err)
		}
	}
	if ev := waitEvent(t, w, testTimeout, "deletion of the closed session's node"); ev.Type != zk.EventNodeDeleted {
		t.Fatalf("event %+v, want NodeDeleted", ev)
	}
}

// Pitfall 9: watching a missing node with GetW or ChildrenW leaves no watch
// on the server; ExistsW does, until the node appears. Counted on the
// server (wchs).
func TestWatchesOnMissingNodes(t *testing.T) {
	srv := server(t)
	ns := newNamespace(t)
	c := connectNS(t, ns)
	ctx := testCtx(t)
	if _, err := c.Create(ctx, "/dir", nil); err != nil {
		t.Fatal(err)
	}
	// Watches on this test's paths only (wchp lists each watched path,
	// then one indented line per session watching it): other tests'
	// sessions may still be expiring.
	count := func() int {
		t.Helper()
		out, err := srv.FourLetterWord("wchp")
		if err != nil {
			t.Fatal(err)
		}
		n, ours := 0, false
		for _, line := range strings.Split(out, "\n") {
			switch {
			case strings.HasPrefix(line, "/"):
				ours = strings.HasPrefix(line, "/"+ns+"/")
			case ours && strings.TrimSpace(line) != "":
				n++
			}
		}
		return n
	}
	before := count()
	if before != 0 {
		t.Fatalf("%d watches on a fresh namespace", before)
	}
	if _, _, _, err := c.GetW(ctx, "/dir/missing"); !errors.Is(err, zk.ErrNoNode) {
		t.Fatalf("GetW of a missing node = %v, want zk.ErrNoNode", err)
	}
	if _, _, _, err := c.ChildrenW(ctx, "/dir/missing"); !errors.Is(err, zk.ErrNoNode) {
		t.Fatalf("ChildrenW of a missing node = %v, want zk.ErrNoNode", err)
	}
	if n := count(); n != before {
		t.Fatalf("%d watches on the server after GetW/ChildrenW of a missing node, want %d", n, before)
	}
	st, w, err := c.ExistsW(ctx, "/dir/missing")
	if err != nil || st != nil {
		t.Fatalf("ExistsW = %+v, %v", st, err)
	}
	if n := count(); n != before+1 {
		t.Fatalf("%d watches after ExistsW of a missing node, want %d", n, before+1)
	}
	if _, err := c.Create(ctx, "/dir/missing", nil); err != nil {
		t.Fatal(err)
	}
	if ev := waitEvent(t, w, testTimeout, "exists watch"); ev.Type != zk.EventNodeCreated || ev.Path != "/dir/missing" {
		t.Fatalf("event %+v", ev)
	}
	if n := count(); n != before {
		t.Fatalf("%d watches after the exists watch fired, want %d", n, before)
	}
}

// Watches end with the client: a pending watch gets one EventNotWatching
// when the client closes, and its channel is closed.
func TestWatchesEndAtClose(t *testing.T) {
	ns := newNamespace(t)
	c := connectNS(t, ns)
	ctx := testCtx(t)
	if _, err := c.Create(ctx, "/w", nil); err != nil {
		t.Fatal(err)
	}
	_, _, dataW, err := c.GetW(ctx, "/w")
	if err != nil {
		t.Fatal(err)
	}
	_, _, childW, err := c.ChildrenW(ctx, "/w")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	for _, w := range []<-chan zk.Event{dataW, childW} {
		ev := waitEvent(t, w, testTimeout, "end of the watch")
		if ev.Type != zk.EventNotWatching || ev.Path != "/w" {
			t.Fatalf("event %+v, want EventNotWatching on /w", ev)
		}
		if _, ok := <-w; ok {
			t.Fatal("a second event on a watch channel")
		}
	}
}
