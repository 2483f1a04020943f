package gzipcodec

import (
	"bytes"
	"compress/gzip"
	"io"
	"testing"
)

// The gzip codec is standard gzip: the standard library reads what it
// writes, and it reads what others write, several members included.
func TestCodec(t *testing.T) {
	var codec Codec
	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"empty", []byte{}},
		{"short", []byte("hello")},
		{"repetitive", bytes.Repeat([]byte("curator "), 10000)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			z, err := codec.Compress("/p", tc.data)
			if err != nil {
				t.Fatal(err)
			}
			r, err := gzip.NewReader(bytes.NewReader(z))
			if err != nil {
				t.Fatal(err)
			}
			std, err := io.ReadAll(r)
			if err != nil || !bytes.Equal(std, tc.data) {
				t.Fatalf("compress/gzip read %d bytes (%v), want %d", len(std), err, len(tc.data))
			}
			back, err := codec.Decompress("/p", z)
			if err != nil || !bytes.Equal(back, tc.data) {
				t.Fatalf("Decompress: %d bytes, %v", len(back), err)
			}
		})
	}
	var two bytes.Buffer
	for _, part := range []string{"first ", "second"} {
		w := gzip.NewWriter(&two)
		w.Write([]byte(part))
		w.Close()
	}
	if got, err := codec.Decompress("/p", two.Bytes()); err != nil || string(got) != "first second" {
		t.Fatalf("two members: %q, %v", got, err)
	}
	for _, bad := range [][]byte{nil, []byte("plain text"), {0x1f, 0x8b}} {
		if _, err := codec.Decompress("/p", bad); err == nil {
			t.Fatalf("Decompress(%q) succeeded", bad)
		}
	}
	z, _ := codec.Compress("/p", []byte("checked"))
	z[len(z)-5] ^= 0xff // the CRC
	if _, err := codec.Decompress("/p", z); err == nil {
		t.Fatal("a corrupt CRC went unnoticed")
	}
}
