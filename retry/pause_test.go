package retry

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"
)

func TestPause(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		name string
		p    Pause
		want []time.Duration
	}{
		{"doubles up to Max", Pause{Base: 50 * ms, Max: time.Second}, []time.Duration{50 * ms, 100 * ms, 200 * ms, 400 * ms, 800 * ms, time.Second, time.Second}},
		{"no cap", Pause{Base: ms}, []time.Duration{ms, 2 * ms, 4 * ms, 8 * ms}},
		{"base above Max", Pause{Base: 2 * time.Second, Max: time.Second}, []time.Duration{time.Second, time.Second}},
		{"zero base", Pause{}, []time.Duration{0, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []time.Duration
			for range tt.want {
				got = append(got, tt.p.Next())
			}
			if !slices.Equal(got, tt.want) {
				t.Fatalf("pauses %v, want %v", got, tt.want)
			}
		})
	}
}

// Wait returns ctx's error at once for an ended ctx, whatever the pause.
func TestPauseWaitEndedContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	p := Pause{Base: time.Hour}
	if err := p.Wait(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Wait = %v, want context.Canceled", err)
	}
}
