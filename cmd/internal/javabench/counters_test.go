package javabench

import (
	"context"
	"testing"
	"time"
)

// A short CountersBench.java run of each phase: sane figures, and the
// counter read back exact.
func TestRunCounters(t *testing.T) {
	ns := unique(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	r, err := RunCounters(ctx, CountersConfig{ConnectString: zkAddr + "/" + ns, Path: "/counter", Clients: 3, N: 20,
		Phase: "increment"})
	if err != nil {
		t.Fatal(err)
	}
	if r.IncrementsPerSec <= 0 || r.Final != 3*(20+2) || r.RoundMs != 0 {
		t.Fatalf("increments: %+v", r)
	}
	r, err = RunCounters(ctx, CountersConfig{ConnectString: zkAddr + "/" + ns, Path: "/barrier", Clients: 3, N: 2,
		Phase: "barrier"})
	if err != nil || r.RoundMs <= 0 || r.IncrementsPerSec != 0 {
		t.Fatalf("barrier rounds: %+v, %v", r, err)
	}
	if _, err := RunCounters(ctx, CountersConfig{ConnectString: zkAddr, Path: "/c", Clients: 1, N: 1, Phase: "nope"}); err == nil {
		t.Fatal("an unknown phase was accepted")
	}
}
