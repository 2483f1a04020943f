package javabench

import (
	"context"
	"testing"
	"time"
)

// A short QueueBench.java run of each mode: sane figures (the JVM fails
// the run unless every item is consumed once).
func TestRunQueue(t *testing.T) {
	ns := unique(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, mode := range []string{"queue", "queue-lock", "simple"} {
		r, err := RunQueue(ctx, QueueConfig{ConnectString: zkAddr + "/" + ns, Path: "/" + mode, Mode: mode,
			Producers: 2, Consumers: 2, Items: 20})
		if err != nil {
			t.Fatalf("%s: %v", mode, err)
		}
		if r.ItemsPerSec <= 0 || r.P50Ms <= 0 || r.P99Ms < r.P50Ms {
			t.Fatalf("%s: %+v", mode, r)
		}
	}
	if _, err := RunQueue(ctx, QueueConfig{ConnectString: zkAddr, Path: "/q", Mode: "nope", Producers: 1, Consumers: 1, Items: 1}); err == nil {
		t.Fatal("an unknown mode was accepted")
	}
}
