package framework

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"testing"

	"github.com/gocurator/curator/internal/curatorjava"
)

// hexOf is data as the driver's commands write it: hex, "-" for empty.
func hexOf(b []byte) string {
	if len(b) == 0 {
		return "-"
	}
	return hex.EncodeToString(b)
}

// Curator's GzipCompressionProvider reads what Compressed writes, and
// Decompressed reads what Curator's compressed() writes, in both
// directions for empty, short and large data.
func TestCompressionInteropWithCurator(t *testing.T) {
	ctx := testCtx(t)
	base := "/" + newNamespace(t)
	c := connect(t, server(t).ConnectString())
	java := curatorjava.StartDriver(t, server(t).ConnectString())
	t.Cleanup(func() {
		if err := c.Delete(testCtx(t), base, DeletingChildren(), Quietly()); err != nil {
			t.Error(err)
		}
	})
	for i, data := range [][]byte{
		{},
		[]byte("hello, curator"),
		bytes.Repeat([]byte("0123456789abcdef"), 4096),
	} {
		// Java writes, Go reads.
		jp := fmt.Sprintf("%s/java-%d", base, i)
		java.MustDo(fmt.Sprintf("fw-zcreate %s %s", jp, hexOf(data)))
		got, _, err := c.Get(ctx, jp, Decompressed())
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("%d bytes written by Curator: Go read %d bytes, %v", len(data), len(got), err)
		}
		// Go writes, Java reads.
		gp := fmt.Sprintf("%s/go-%d", base, i)
		if _, err := c.Create(ctx, gp, data, Compressed(), CreatingParents()); err != nil {
			t.Fatal(err)
		}
		if got := java.MustDo("fw-zget " + gp); got != hexOf(data) {
			t.Fatalf("%d bytes written by Go: Curator read %d hex digits", len(data), len(got))
		}
		// Both sides' sets.
		next := append([]byte("next "), data...)
		if _, err := c.Set(ctx, jp, next, -1, Compressed()); err != nil {
			t.Fatal(err)
		}
		if got := java.MustDo("fw-zget " + jp); got != hexOf(next) {
			t.Fatalf("Go's compressed set: Curator read %.40s...", got)
		}
		java.MustDo(fmt.Sprintf("fw-zset %s %s", gp, hexOf(next)))
		if got, _, err := c.Get(ctx, gp, Decompressed()); err != nil || !bytes.Equal(got, next) {
			t.Fatalf("Curator's compressed set: Go read %d bytes, %v", len(got), err)
		}
		// Curator's provider on its own decodes with ours.
		z, err := hex.DecodeString(java.MustDo("fw-gzip " + hexOf(data)))
		if err != nil {
			t.Fatal(err)
		}
		if got, err := Gzip().Decompress("/", z); err != nil || !bytes.Equal(got, data) {
			t.Fatalf("GzipCompressionProvider.compress: Gzip decoded %d bytes, %v", len(got), err)
		}
	}
}
