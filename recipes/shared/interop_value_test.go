package shared_test

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"testing"

	"github.com/gocurator/curator/internal/curatorjava"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/shared"
)

// hexOf writes bytes as the driver does: lower-case hex, "-" for none.
func hexOf(b []byte) string {
	if len(b) == 0 {
		return "-"
	}
	return hex.EncodeToString(b)
}

// Curator's SharedValue and ours read and write one value, both ways,
// binary and empty values included, and each one's versioned write is
// refused after the other's write. Java uses full paths: no namespace
// here, a path unique to the test instead.
func TestInteropWithCuratorSharedValue(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t)
	base := "/interop/" + testkit.Unique(t)
	c := testkit.Connect(t, zkAddr, "")
	java := curatorjava.StartDriver(t, zkAddr)
	event := func(id string, b []byte) {
		t.Helper()
		if err := java.WaitEvent(fmt.Sprintf("value %s %s", id, hexOf(b)), testkit.Deadline); err != nil {
			t.Fatal(err)
		}
	}
	expect := func(cmd, want string) {
		t.Helper()
		if got := java.MustDo(cmd); got != want {
			t.Fatalf("%s: got %q, want %q", cmd, got, want)
		}
	}

	// Java makes the node: we read its seed and ignore ours.
	p := base + "/java-first"
	expect(fmt.Sprintf("value j %s %s", p, hexOf([]byte("java seed"))), "")
	v := shared.NewValue(c, p, []byte("go seed"))
	defer v.Close()
	if err := v.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if got := v.Cached(); string(got) != "java seed" {
		t.Fatalf("Go read Curator's seed as %q", got)
	}
	stale := v.Versioned()

	// Our writes reach Curator's cache, bytes exactly.
	binary := []byte{0x00, 0xff, 0x80, '\n', ' ', 0x7f}
	if err := v.Set(ctx, binary); err != nil {
		t.Fatal(err)
	}
	event("j", binary)
	expect("vget j", hexOf(binary))

	// Curator's writes reach ours.
	expect("vset j 00010203", "")
	waitBytes(t, v, []byte{0, 1, 2, 3})
	expect("vtrySet j -", "true")
	waitBytes(t, v, []byte{})
	if ok, err := v.TrySet(ctx, stale, []byte("late")); ok || err != nil {
		t.Fatalf("TrySet with a version older than Curator's writes = %v, %v; want false", ok, err)
	}
	cur, err := v.GetVersioned(ctx)
	if err != nil || len(cur.Value) != 0 {
		t.Fatalf("GetVersioned = %+v, %v", cur, err)
	}
	expect("vversion j", fmt.Sprint(cur.Version))
	if ok, err := v.TrySet(ctx, cur, []byte("go wins")); !ok || err != nil {
		t.Fatalf("TrySet at Curator's version = %v, %v", ok, err)
	}
	event("j", []byte("go wins"))
	// Curator's trySetValue compares against its cached version, which is
	// ours now.
	expect("vtrySet j 6a617661", "true")
	waitBytes(t, v, []byte("java"))

	// We make the node: Curator reads our seed.
	q := base + "/go-first"
	w := shared.NewValue(c, q, []byte{0xca, 0xfe})
	defer w.Close()
	if err := w.Start(ctx); err != nil {
		t.Fatal(err)
	}
	expect(fmt.Sprintf("value j2 %s 00", q), "")
	expect("vget j2", "cafe")
	expect("vclose j2", "")
	expect("vclose j", "")
	if got, err := w.Get(ctx); err != nil || !bytes.Equal(got, []byte{0xca, 0xfe}) {
		t.Fatalf("Get = %x, %v", got, err)
	}
}
