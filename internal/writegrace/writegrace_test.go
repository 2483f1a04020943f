package writegrace

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type key struct{}

func TestContext(t *testing.T) {
	errWrite := errors.New("write failed")
	tests := []struct {
		name string
		// cancelFirst ends the caller's ctx before the write finishes.
		cancelFirst bool
		// outlive makes the write outlast the grace.
		outlive  bool
		writeErr error
		want     []error // errors.Is targets of done's result (nil: want nil)
	}{
		{name: "write done, ctx live", writeErr: nil},
		{name: "write failed, ctx live", writeErr: errWrite, want: []error{errWrite}},
		{name: "ctx ended, write answered within the grace", cancelFirst: true, writeErr: nil},
		{name: "ctx ended, write refused within the grace", cancelFirst: true, writeErr: errWrite, want: []error{errWrite}},
		{name: "ctx ended, grace ran out", cancelFirst: true, outlive: true, writeErr: context.Canceled,
			want: []error{context.Canceled}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.WithValue(context.Background(), key{}, "v"))
			defer cancel()
			grace := time.Hour
			if tt.outlive {
				grace = time.Millisecond
			}
			wctx, done := contextAfter(ctx, grace)
			if wctx.Value(key{}) != "v" {
				t.Fatal("the write's context lost the caller's values")
			}
			if tt.cancelFirst {
				cancel()
			}
			if tt.outlive {
				<-wctx.Done() // the write is still going when the grace ends
			} else if wctx.Err() != nil {
				t.Fatalf("the write's context ended with the caller's: %v", wctx.Err())
			}
			err := done(tt.writeErr)
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("done = %v, want nil", err)
				}
			}
			for _, w := range tt.want {
				if !errors.Is(err, w) {
					t.Fatalf("done = %v, want it to match %v", err, w)
				}
			}
			if wctx.Err() == nil {
				t.Fatal("done left the write's context running")
			}
		})
	}
}

// A nil ctx stays nil, for the framework to refuse as it refuses the
// caller's (the conformance suite's TestNilContextChangesNothing).
func TestNilContext(t *testing.T) {
	var nilCtx context.Context
	wctx, done := Context(nilCtx)
	if wctx != nil {
		t.Fatalf("Context(nil) = %v, want nil", wctx)
	}
	errWrite := errors.New("refused")
	if err := done(errWrite); !errors.Is(err, errWrite) {
		t.Fatalf("done = %v, want the write's error", err)
	}
}
