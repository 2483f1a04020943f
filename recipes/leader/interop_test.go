package leader_test

import (
	"testing"
	"time"

	"github.com/gocurator/curator/internal/curatorjava"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/leader"
)

// Apache Curator 5.4's LeaderLatch and LeaderSelector (run by the Java
// driver) and ours in one election, in each layout: one leader at a time,
// hand-over in both directions, and each side lists the other.
func TestInteropWithCurator(t *testing.T) {
	for _, tc := range []struct {
		name string
		cmd  string // the driver's command making the Java participant
		opts []leader.Option
	}{
		{"LeaderLatch", "latch", nil},
		{"LeaderSelector", "selector", []leader.Option{leader.SelectorLayout()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			java := curatorjava.StartDriver(t, zkAddr)
			c := testkit.Connect(t, zkAddr, "") // no namespace: Java sees full paths
			ctx := testkit.Ctx(t)
			path := "/interop/" + testkit.Unique(t)
			const wait = 30 * time.Second

			// Java leads first; Go queues behind it.
			java.MustDo(tc.cmd + " j " + path + " java")
			if err := java.WaitEvent("leader j true", wait); err != nil {
				t.Fatal(err)
			}
			e := leader.New(c, path, append(tc.opts, leader.WithID("go"))...)
			goTerm := campaign(ctx, e)
			testkit.Eventually(t, "Go queued behind Java", func() bool { return len(testkit.Children(t, c, path)) == 2 })
			ps, err := e.Participants(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(ps) != 2 || ps[0] != (leader.Participant{ID: "java", IsLeader: true}) || ps[1] != (leader.Participant{ID: "go"}) {
				t.Fatalf("Go's participants %+v", ps)
			}
			if got := java.MustDo("leaders j"); got != "java:true,go:false" {
				t.Fatalf("Java's participants %s", got)
			}

			// Java gives up: Go leads, and Java does not.
			if tc.cmd == "latch" {
				java.MustDo("close j")
			} else {
				if got := java.MustDo("yield j"); got != "true" {
					t.Fatalf("yield: %s", got)
				}
			}
			r := await(t, goTerm, "Go's term")
			if r.err != nil {
				t.Fatal(r.err)
			}
			if tc.cmd == "latch" {
				java.MustDo(tc.cmd + " j2 " + path + " java") // a new Java candidate
			}
			jid := "j"
			if tc.cmd == "latch" {
				jid = "j2"
			}
			testkit.Eventually(t, "Java queued behind Go", func() bool { return len(testkit.Children(t, c, path)) == 2 })
			if got := java.MustDo("hasLeadership " + jid); got != "false" {
				t.Fatalf("Java leads while Go does: %s", got)
			}
			if got := java.MustDo("leaders " + jid); got != "go:true,java:false" {
				t.Fatalf("Java's participants while Go leads: %s", got)
			}
			if l, err := e.Leader(ctx); err != nil || l.ID != "go" {
				t.Fatalf("Go's Leader = %+v, %v", l, err)
			}

			// Go resigns: Java leads again.
			if err := r.term.Resign(ctx); err != nil {
				t.Fatal(err)
			}
			if err := java.WaitEvent("leader "+jid+" true", wait); err != nil {
				t.Fatal(err)
			}
			if l, err := e.Leader(ctx); err != nil || l.ID != "java" {
				t.Fatalf("Go's Leader after resigning = %+v, %v", l, err)
			}
			if tc.cmd == "selector" {
				java.MustDo("yield j")
			}
			java.MustDo("close " + jid)
			testkit.Eventually(t, "no node left", func() bool {
				return len(testkit.Children(t, c, path)) == 0
			})
		})
	}
}
