package framework

import (
	"errors"
	"testing"
)

// Sync is a barrier before a read: a write made by another client before
// Sync is seen by the read after it. It applies the namespace and leaves
// nothing on the server.
func TestSyncThenReadSeesOtherClientsWrite(t *testing.T) {
	ns := newNamespace(t)
	a, b := connectNS(t, ns), connectNS(t, ns)
	ctx := testCtx(t)
	if _, err := a.Create(ctx, "/n", []byte("1")); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Set(ctx, "/n", []byte("2"), -1); err != nil {
		t.Fatal(err)
	}
	if err := b.Sync(ctx, "/n"); err != nil {
		t.Fatalf("Sync: %v", err)
	}
	data, _, err := b.Get(ctx, "/n")
	if err != nil || string(data) != "2" {
		t.Fatalf("Get after Sync = %q, %v; want 2", data, err)
	}
	// The root of the namespace may be synced too, and a missing path is
	// not an error (ZooKeeper syncs the whole tree).
	if err := b.Sync(ctx, "/"); err != nil {
		t.Fatalf("Sync(/): %v", err)
	}
	if err := b.Sync(ctx, "/missing"); err != nil {
		t.Fatalf("Sync(/missing): %v", err)
	}
	ch, _, err := b.Children(ctx, "/")
	if err != nil || len(ch) != 1 {
		t.Fatalf("namespace holds %v, %v; want only n", ch, err)
	}
}

func TestSyncBadInputAndClosed(t *testing.T) {
	c := connectNS(t, newNamespace(t))
	ctx := testCtx(t)
	for _, p := range []string{"", "rel", "/a/", "/a//b", "/a/./b"} {
		if err := c.Sync(ctx, p); !errors.Is(err, ErrInvalidPath) {
			t.Errorf("Sync(%q) = %v, want ErrInvalidPath", p, err)
		}
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Sync(ctx, "/"); !errors.Is(err, ErrClosed) {
		t.Errorf("Sync after Close = %v, want ErrClosed", err)
	}
}
