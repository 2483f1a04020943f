package atomic_test

import (
	"encoding/binary"
	"errors"
	"testing"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/curatorjava"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/atomic"
	"github.com/gocurator/curator/zktest"
)

// long8 is v as a DistributedAtomicLong stores it.
func long8(v int64) []byte {
	b := make([]byte, 8)
	binary.BigEndian.PutUint64(b, uint64(v))
	return b
}

// Issue 33 item 13: a counter whose ACL lets Curator update it
// (world:anyone:rw: no CREATE, set by another client) is updated here too,
// by Go and by Java on the same node; before the fix every Go update failed
// with zk.ErrNoAuth (the writer child needs CREATE). Nothing is left under
// the node.
func TestCounterWithoutCreatePermission(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t)
	path := "/interop/" + testkit.Unique(t) + "/counter"
	admin := testkit.Connect(t, zkAddr, "")
	rw := zk.WorldACL(zk.PermRead | zk.PermWrite)
	if _, err := admin.Create(ctx, path, long8(0), framework.CreatingParentContainers(), framework.WithACL(rw)); err != nil {
		t.Fatal(err)
	}
	java := curatorjava.StartDriver(t, zkAddr)
	java.MustDo("along jl " + path)

	c := testkit.Connect(t, zkAddr, "")
	l := atomic.NewLong(c, path)
	defer func() { _ = l.Close(ctx) }()
	if v, err := l.Add(ctx, 5); err != nil || v != 5 {
		t.Fatalf("Add on a world:anyone:rw counter = %d, %v; want 5", v, err)
	}
	if got := java.MustDo("aadd jl 2"); got != "true 5 7 1 0" {
		t.Fatalf("Java's add: %q", got)
	}
	if r, err := l.Increment(ctx); err != nil || !r.Succeeded || r.PostValue != 8 {
		t.Fatalf("Increment = %+v, %v; want 8", r, err)
	}
	if kids := testkit.Children(t, admin, path); len(kids) != 0 {
		t.Fatalf("left under the counter: %v", kids)
	}
	if err := l.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := admin.Delete(ctx, path); err != nil {
		t.Fatalf("plain delete of the counter: %v", err)
	}
}

// An ephemeral value node (Curator updates it; it cannot have children)
// is updated here too.
func TestCounterOnEphemeralNode(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t)
	ns := testkit.Unique(t)
	owner := testkit.Connect(t, zkAddr, ns)
	if _, err := owner.Create(ctx, "/counter", long8(40), framework.WithMode(framework.Ephemeral)); err != nil {
		t.Fatal(err)
	}
	l := atomic.NewLong(testkit.Connect(t, zkAddr, ns), "/counter")
	defer func() { _ = l.Close(ctx) }()
	if v, err := l.Add(ctx, 2); err != nil || v != 42 {
		t.Fatalf("Add on an ephemeral counter = %d, %v; want 42", v, err)
	}
}

// Without the writer child, a lost reply cannot be told from a refusal by
// a stamp: the fallback never counts twice (Curator 5.4 does) and says
// ErrUnknownOutcome when its own write may be what it reads back.
func TestCounterWithoutCreatePermissionLostReply(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t)
	ns := testkit.Unique(t)
	admin := testkit.Connect(t, zkAddr, ns)
	if _, err := admin.Create(ctx, "/counter", long8(0), framework.WithACL(zk.WorldACL(zk.PermRead|zk.PermWrite))); err != nil {
		t.Fatal(err)
	}
	proxy := zktest.NewProxy(t, zkAddr)
	l := atomic.NewLong(testkit.Connect(t, proxy.Addr(), ns), "/counter")
	defer func() { _ = l.Close(ctx) }()
	if _, err := l.Add(ctx, 1); err != nil { // learns the ACL
		t.Fatal(err)
	}
	lost := proxy.LoseNextSetReply()
	_, err := l.Add(ctx, 1)
	testkit.WaitClosed(t, lost, "the lost reply")
	if !errors.Is(err, atomic.ErrUnknownOutcome) {
		t.Fatalf("Add with its reply lost = %v; want ErrUnknownOutcome", err)
	}
	data, _, gerr := admin.Get(ctx, "/counter")
	if gerr != nil {
		t.Fatal(gerr)
	}
	if got := int64(binary.BigEndian.Uint64(data)); got != 2 {
		t.Fatalf("counter = %d; want 2 (applied once)", got)
	}
}
