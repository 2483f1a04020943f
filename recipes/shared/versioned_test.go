package shared

import (
	"bytes"
	"errors"
	"math"
	"testing"
)

func TestEncode(t *testing.T) {
	tests := []struct {
		name    string
		v       int
		want    []byte
		wantErr error
	}{
		{"zero", 0, []byte{0, 0, 0, 0}, nil},
		{"one", 1, []byte{0, 0, 0, 1}, nil},
		{"big-endian", 0x01020304, []byte{1, 2, 3, 4}, nil},
		{"minus one", -1, []byte{0xff, 0xff, 0xff, 0xff}, nil},
		{"max int32", math.MaxInt32, []byte{0x7f, 0xff, 0xff, 0xff}, nil},
		{"min int32", math.MinInt32, []byte{0x80, 0, 0, 0}, nil},
		{"above int32", math.MaxInt32 + 1, nil, ErrOutOfRange},
		{"below int32", math.MinInt32 - 1, nil, ErrOutOfRange},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := encode(tt.v)
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil && err != nil) {
				t.Fatalf("encode(%d) error = %v, want %v", tt.v, err, tt.wantErr)
			}
			if !bytes.Equal(got, tt.want) {
				t.Fatalf("encode(%d) = %x, want %x", tt.v, got, tt.want)
			}
		})
	}
}

func TestDecode(t *testing.T) {
	tests := []struct {
		name    string
		data    []byte
		want    int
		wantErr error
	}{
		{"seven", []byte{0, 0, 0, 7}, 7, nil},
		{"negative", []byte{0xff, 0xff, 0xff, 0xfe}, -2, nil},
		{"min int32", []byte{0x80, 0, 0, 0}, math.MinInt32, nil},
		// Curator's ByteBuffer.getInt reads the first four bytes.
		{"longer data: first four bytes", []byte{0, 0, 1, 0, 9, 9}, 256, nil},
		{"empty", nil, 0, ErrMalformed},
		{"three bytes", []byte{1, 2, 3}, 0, ErrMalformed},
		{"local IP written by a lock, not a count", []byte("1"), 0, ErrMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := decode(tt.data)
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil && err != nil) {
				t.Fatalf("decode(%x) error = %v, want %v", tt.data, err, tt.wantErr)
			}
			if got != tt.want {
				t.Fatalf("decode(%x) = %d, want %d", tt.data, got, tt.want)
			}
		})
	}
}

func TestRoundTrip(t *testing.T) {
	for _, v := range []int{math.MinInt32, -65536, -1, 0, 1, 3, 255, 256, 1 << 24, math.MaxInt32} {
		b, err := encode(v)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := decode(b); err != nil || got != v {
			t.Fatalf("round trip of %d: %d, %v", v, got, err)
		}
	}
}
