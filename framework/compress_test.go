package framework

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/go-zookeeper/zk"
)

// upper is a codec that is easy to recognise on the server.
type upper struct{}

func (upper) Compress(_ string, d []byte) ([]byte, error) {
	return []byte("U:" + strings.ToUpper(string(d))), nil
}

func (upper) Decompress(_ string, d []byte) ([]byte, error) {
	s, ok := strings.CutPrefix(string(d), "U:")
	if !ok {
		return nil, errors.New("not upper")
	}
	return []byte(strings.ToLower(s)), nil
}

func TestCompressedWritesAndReads(t *testing.T) {
	ns := newNamespace(t)
	c := connectNS(t, ns)
	ctx := testCtx(t)
	data := bytes.Repeat([]byte("compressible "), 1000)

	if _, err := c.Create(ctx, "/z", data, Compressed()); err != nil {
		t.Fatal(err)
	}
	raw, _, err := c.Get(ctx, "/z")
	if err != nil {
		t.Fatal(err)
	}
	if len(raw) >= len(data) || raw[0] != 0x1f || raw[1] != 0x8b {
		t.Fatalf("stored %d bytes starting % x, want gzip shorter than %d", len(raw), raw[:2], len(data))
	}
	got, _, err := c.Get(ctx, "/z", Decompressed())
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("Decompressed Get: %d bytes, %v", len(got), err)
	}
	if _, err := c.Set(ctx, "/z", []byte("v2"), -1, Compressed()); err != nil {
		t.Fatal(err)
	}
	got, _, ch, err := c.GetW(ctx, "/z", Decompressed())
	if err != nil || string(got) != "v2" {
		t.Fatalf("Decompressed GetW: %q, %v", got, err)
	}
	if _, err := c.Set(ctx, "/z", []byte("plain"), -1); err != nil {
		t.Fatal(err)
	}
	waitEvent(t, ch, testTimeout, "data watch of a decompressed GetW")

	// Plain data read as compressed: a typed error, and no watch left
	// behind on the server, since the caller has no channel to wait on.
	_, _, ch, err = c.GetW(ctx, "/z", Decompressed())
	if !errors.Is(err, ErrCompression) || ch != nil {
		t.Fatalf("Decompressed GetW of plain data: %v, want ErrCompression", err)
	}
	awaitServerWatches(t, server(t).Addr(), c)
	if _, _, err := c.Get(ctx, "/z", Decompressed()); !errors.Is(err, ErrCompression) {
		t.Fatalf("Decompressed Get of plain data: %v, want ErrCompression", err)
	}
	if _, _, err := c.Get(ctx, "/missing", Decompressed()); !errors.Is(err, zk.ErrNoNode) {
		t.Fatalf("Decompressed Get of a missing node: %v, want zk.ErrNoNode", err)
	}
	if err := c.Delete(ctx, "/z"); err != nil {
		t.Fatal(err)
	}

	// The size limit counts the compressed data.
	big := bytes.Repeat([]byte{'a'}, 2*DefaultJuteMaxBuffer)
	if _, err := c.Create(ctx, "/big", big); !errors.Is(err, ErrDataTooLarge) {
		t.Fatalf("2 MiB uncompressed: %v, want ErrDataTooLarge", err)
	}
	if _, err := c.Create(ctx, "/big", big, Compressed()); err != nil {
		t.Fatalf("2 MiB compressed: %v", err)
	}
	if got, _, err := c.Get(ctx, "/big", Decompressed()); err != nil || !bytes.Equal(got, big) {
		t.Fatalf("2 MiB read back: %d bytes, %v", len(got), err)
	}

	// A client-wide codec, on by default, off per call.
	u := connectNS(t, ns, WithCompression(upper{}), WithCompressionEnabled())
	if codec, on := u.Compression(); codec != (upper{}) || !on {
		t.Fatalf("Compression() = %T, %v; want upper, true", codec, on)
	}
	if codec, on := c.Compression(); codec != Gzip() || on {
		t.Fatalf("default Compression() = %T, %v; want Gzip, false", codec, on)
	}
	if codec, on := (*Client)(nil).Compression(); codec != Gzip() || on {
		t.Fatalf("nil client's Compression() = %T, %v", codec, on)
	}
	if _, err := u.Create(ctx, "/u", []byte("abc")); err != nil {
		t.Fatal(err)
	}
	if _, err := u.Create(ctx, "/plain", []byte("abc"), Uncompressed()); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path string
		opts []GetOption
		want string
	}{
		{"/u", nil, "abc"},
		{"/u", []GetOption{Uncompressed()}, "U:ABC"},
		{"/plain", []GetOption{Uncompressed()}, "abc"},
	} {
		if got, _, err := u.Get(ctx, tc.path, tc.opts...); err != nil || string(got) != tc.want {
			t.Fatalf("Get(%s, %d options) = %q, %v; want %q", tc.path, len(tc.opts), got, err, tc.want)
		}
	}
	if _, _, err := u.Get(ctx, "/plain"); !errors.Is(err, ErrCompression) {
		t.Fatalf("plain node read by a compressing client: %v, want ErrCompression", err)
	}
	if _, err := u.Set(ctx, "/u", []byte("def"), -1); err != nil {
		t.Fatal(err)
	}
	if raw, _, err := c.Get(ctx, "/u"); err != nil || string(raw) != "U:DEF" {
		t.Fatalf("Set by a compressing client stored %q, %v", raw, err)
	}
	for _, p := range []string{"/big", "/u", "/plain"} {
		if err := c.Delete(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
}

func TestCompressionBadInput(t *testing.T) {
	ctx := testCtx(t)
	if _, err := Connect(ctx, server(t).ConnectString(), WithCompression(nil)); !errors.Is(err, ErrInvalidOption) {
		t.Fatalf("WithCompression(nil): %v, want ErrInvalidOption", err)
	}
	c := connectNS(t, newNamespace(t))
	if _, _, err := c.Get(ctx, "/x", nil); !errors.Is(err, ErrInvalidOption) {
		t.Fatalf("nil GetOption: %v, want ErrInvalidOption", err)
	}
	if _, err := c.Set(ctx, "/x", nil, -1, nil); !errors.Is(err, ErrInvalidOption) {
		t.Fatalf("nil SetOption: %v, want ErrInvalidOption", err)
	}
	failing := connectNS(t, newNamespace(t), WithCompression(failCodec{}))
	if _, err := failing.Create(ctx, "/x", []byte("a"), Compressed()); !errors.Is(err, ErrCompression) || !errors.Is(err, errCodec) {
		t.Fatalf("failing codec: %v, want ErrCompression wrapping the codec's error", err)
	}
	if st, err := failing.Exists(ctx, "/x"); err != nil || st != nil {
		t.Fatalf("a create whose compression failed left %+v, %v", st, err)
	}
}

var errCodec = errors.New("codec broke")

type failCodec struct{}

func (failCodec) Compress(string, []byte) ([]byte, error)   { return nil, errCodec }
func (failCodec) Decompress(string, []byte) ([]byte, error) { return nil, errCodec }
