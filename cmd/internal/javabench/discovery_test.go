package javabench

import (
	"context"
	"testing"
	"time"

	"github.com/gocurator/curator/internal/testkit"
)

// A short DiscoveryBench.java run: sane figures, and Curator's instances
// all unregistered.
func TestRunDiscovery(t *testing.T) {
	ns := unique(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	r, err := RunDiscovery(ctx, DiscoveryConfig{ConnectString: zkAddr + "/" + ns, BasePath: "/services",
		Instances: 2, Picks: 10_000, Churn: 20, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	if r.PickNs <= 0 || r.PickBytes < 0 || r.ChurnPerSec <= 0 {
		t.Fatalf("implausible result %+v", r)
	}
	c := testkit.Connect(t, zkAddr, ns)
	for _, svc := range []string{"/services/svc", "/services/churn"} {
		if kids, _, err := c.Children(ctx, svc); err == nil && len(kids) > 0 {
			t.Fatalf("%s: %d instances left", svc, len(kids))
		}
	}
	if _, err := RunDiscovery(ctx, DiscoveryConfig{ConnectString: zkAddr}); err == nil {
		t.Fatal("a config without counts was accepted")
	}
	// One phase alone: the other's figures are zero.
	r, err = RunDiscovery(ctx, DiscoveryConfig{ConnectString: zkAddr + "/" + ns, BasePath: "/services",
		Instances: 2, Picks: 1000, Churn: 10, Workers: 2, Phase: "churn"})
	if err != nil || r.PickNs != 0 || r.ChurnPerSec <= 0 {
		t.Fatalf("churn alone: %+v, %v", r, err)
	}
	if _, err := RunDiscovery(ctx, DiscoveryConfig{ConnectString: zkAddr, BasePath: "/s", Instances: 1, Picks: 1,
		Churn: 1, Workers: 1, Phase: "nope"}); err == nil {
		t.Fatal("an unknown phase was accepted")
	}
}
