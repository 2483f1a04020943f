package cache_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/cache"
)

// shout is a codec that is easy to recognise on the server.
type shout struct{}

func (shout) Compress(_ string, d []byte) ([]byte, error) {
	return []byte("S:" + strings.ToUpper(string(d))), nil
}

func (shout) Decompress(_ string, d []byte) ([]byte, error) {
	s, ok := strings.CutPrefix(string(d), "S:")
	if !ok {
		return nil, errors.New("not shouted")
	}
	return []byte(strings.ToLower(s)), nil
}

// The cache decodes with the client's codec: with CompressedData, and
// without it on a client made WithCompressionEnabled. A node that does
// not decode is cached as stored, flagged, and does not hold up Start
// (a read that failed to decode once counted as a connection problem,
// and Start waited for a reconnection that never came).
func TestCompressedDataUsesClientCodec(t *testing.T) {
	t.Parallel()
	ns := testkit.Unique(t)
	ctx := testkit.Ctx(t)
	plain := testkit.Connect(t, zkAddr, ns)
	for _, tc := range []struct {
		name string
		opts []framework.Option
		copt []cache.Option
	}{
		{"CompressedData, gzip", nil, []cache.Option{cache.CompressedData()}},
		{"CompressedData, client codec", []framework.Option{framework.WithCompression(shout{})}, []cache.Option{cache.CompressedData()}},
		{"client compresses by default", []framework.Option{framework.WithCompression(shout{}), framework.WithCompressionEnabled()}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := testkit.Connect(t, zkAddr, ns, tc.opts...)
			if _, err := c.Create(ctx, "/z/packed", []byte("hello"), framework.Compressed(), framework.CreatingParents()); err != nil {
				t.Fatal(err)
			}
			if _, err := plain.Create(ctx, "/z/stray", []byte("as is")); err != nil {
				t.Fatal(err)
			}
			defer func() {
				if err := plain.Delete(ctx, "/z", framework.DeletingChildren()); err != nil {
					t.Error(err)
				}
			}()
			ch := cache.New(c, "/z", tc.copt...)
			defer ch.Close()
			rec, cancel := record(ch)
			defer cancel()
			if err := ch.Start(ctx); err != nil {
				t.Fatal(err)
			}
			if n, ok := ch.Get("/z/packed"); !ok || string(n.Data) != "hello" {
				t.Fatalf("compressed node cached as %q, %v", n.Data, ok)
			}
			if n, ok := ch.Get("/z/stray"); !ok || string(n.Data) != "as is" {
				t.Fatalf("plain node cached as %q, %v", n.Data, ok)
			}
			if n, ok := ch.Get("/z"); !ok || len(n.Data) != 0 {
				t.Fatalf("empty parent cached as %q, %v", n.Data, ok)
			}
			ev := rec.await(t, "created /z/stray", is(cache.Created, "/z/stray"))
			if !errors.Is(ev.Err, cache.ErrNotCompressed) || !errors.Is(ev.Err, framework.ErrCompression) {
				t.Fatalf("event of the plain node: Err %v, want ErrNotCompressed", ev.Err)
			}
			for _, ev := range rec.snapshot() {
				if ev.Path != "/z/stray" && ev.Err != nil {
					t.Fatalf("%v %s: Err %v", ev.Type, ev.Path, ev.Err)
				}
			}
			if _, err := c.Set(ctx, "/z/packed", []byte("again"), -1, framework.Compressed()); err != nil {
				t.Fatal(err)
			}
			if err := ch.Synced(ctx); err != nil {
				t.Fatal(err)
			}
			if n, _ := ch.Get("/z/packed"); string(n.Data) != "again" {
				t.Fatalf("after a compressed set: %q", n.Data)
			}
		})
	}
}
