package atomic

import (
	"errors"
	"math"
	"testing"
)

// Curator's encoding: big-endian, missing or empty is 0, short data is
// corrupt, trailing bytes are ignored (ByteBuffer.getLong reads the first 8).
func TestEncoding(t *testing.T) {
	for _, tc := range []struct {
		name string
		data []byte
		long int64
		int  int32
		err  bool // for both
		// layout: the long (L) or the int (I) refuses the data as
		// another kind's layout.
		layout string
	}{
		{"empty", nil, 0, 0, false, ""},
		{"zero-length", []byte{}, 0, 0, false, ""},
		{"one", []byte{0, 0, 0, 0, 0, 0, 0, 1}, 1, 0, false, "I"},
		{"minus one", []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, -1, -1, false, "I"},
		{"short", []byte{1, 2, 3}, 0, 0, true, ""},
		{"an int", []byte{0, 0, 0, 5}, 0, 5, false, "L"},
		{"trailing", []byte{0, 0, 0, 0, 0, 0, 0, 7, 9, 9}, 7, 0, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := decode[int64](tc.data)
			if tc.layout == "L" {
				if !errors.Is(err, ErrLayoutMismatch) || !errors.Is(err, ErrMalformed) {
					t.Fatalf("long: %d, %v; want ErrLayoutMismatch and ErrMalformed", l, err)
				}
			} else if (err != nil) != tc.err || (err == nil && l != tc.long) {
				t.Fatalf("long: %d, %v", l, err)
			}
			if tc.err && !errors.Is(err, ErrMalformed) {
				t.Fatalf("long error %v does not match ErrMalformed", err)
			}
			i, err := decode[int32](tc.data)
			if tc.layout == "I" {
				if !errors.Is(err, ErrLayoutMismatch) {
					t.Fatalf("int: %d, %v; want ErrLayoutMismatch", i, err)
				}
			} else if (err != nil) != tc.err || (err == nil && i != tc.int) {
				t.Fatalf("int: %d, %v", i, err)
			}
		})
	}
	for _, v := range []int64{0, 1, -1, math.MaxInt64, math.MinInt64, 1 << 40} {
		b := encode(v)
		if len(b) != 8 {
			t.Fatalf("encode(%d) is %d bytes", v, len(b))
		}
		if got, _ := decode[int64](b); got != v {
			t.Fatalf("round trip of %d gave %d", v, got)
		}
	}
	for _, v := range []int32{0, 1, -1, math.MaxInt32, math.MinInt32} {
		b := encode(v)
		if len(b) != 4 {
			t.Fatalf("encode(%d) is %d bytes", v, len(b))
		}
		if got, _ := decode[int32](b); got != v {
			t.Fatalf("round trip of %d gave %d", v, got)
		}
	}
}
