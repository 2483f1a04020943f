package zktest_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gocurator/curator/zktest"
)

func TestEnsemble(t *testing.T) {
	start := time.Now()
	ens := zktest.StartEnsemble(t, 3)
	t.Logf("StartEnsemble(3) took %v", time.Since(start))

	if got := len(strings.Split(ens.ConnectString(), ",")); got != 3 {
		t.Fatalf("ConnectString %q lists %d servers", ens.ConnectString(), got)
	}
	for i, s := range ens.Servers() {
		if s.ID() != i+1 {
			t.Fatalf("Servers()[%d].ID() = %d", i, s.ID())
		}
	}
	leader, err := ens.Leader()
	if err != nil {
		t.Fatal(err)
	}
	followers := 0
	for _, s := range ens.Servers() {
		if mode, err := s.Mode(); err == nil && mode == "follower" {
			followers++
		}
	}
	if followers != 2 {
		t.Fatalf("%d followers, want 2", followers)
	}

	c, _ := connect(t, strings.Split(ens.ConnectString(), ","))
	if _, err := c.Create("/replicated", []byte("v"), 0, openACL); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := c.ExistsW("/replicated"); err != nil {
		t.Fatal(err)
	}
	if n, err := ens.WatchCount(); err != nil || n != 1 {
		t.Fatalf("ensemble WatchCount() = %d, %v; want 1", n, err)
	}

	if err := leader.Kill(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	start = time.Now()
	next, err := ens.AwaitLeader(ctx, leader)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("server %d took over from server %d in %v", next.ID(), leader.ID(), time.Since(start))

	direct, _ := connect(t, []string{next.Addr()})
	if data, _, err := direct.Get("/replicated"); err != nil || string(data) != "v" {
		t.Fatalf("Get from new leader = %q, %v", data, err)
	}

	if err := leader.Restart(); err != nil {
		t.Fatal(err)
	}
	if mode, err := leader.Mode(); err != nil || mode != "follower" {
		t.Fatalf("old leader rejoined as %q, %v; want follower", mode, err)
	}
}
