package group_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gocurator/curator/connstate"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/group"
	"github.com/gocurator/curator/recipes/node"
	"github.com/gocurator/curator/retry"
	"github.com/gocurator/curator/zktest"
)

// Issue 33 item 4: a SetPayload refused for its size
// (framework.ErrDataTooLarge) kept the refused payload for the next
// create, so a member whose node was deleted (or whose session expired)
// stayed out of its group for good. It must come back with the last
// accepted payload.
func TestRefusedPayloadKeepsTheMember(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		expire bool
	}{
		{"deleted", false},
		{"session expired", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ns := testkit.Unique(t)
			proxy := zktest.NewProxy(t, zkAddr)
			c := testkit.Connect(t, proxy.Addr(), ns,
				framework.WithSessionTimeout(4*time.Second), framework.WithSessionExpiryPercent(50),
				framework.WithRetryPolicy(retry.NTimes(100, 100*time.Millisecond)))
			admin := testkit.Connect(t, zkAddr, ns)
			ctx := testkit.Ctx(t)
			m := group.New(c, "/g", "m1", []byte("p1"))
			defer closeMember(t, m)
			lost := make(chan struct{}, 1)
			back := make(chan node.Event, 8)
			cancel := m.Node().Listen(func(ev node.Event) {
				switch ev.State {
				case node.Recreating:
					select {
					case lost <- struct{}{}:
					default:
					}
				case node.Registered:
					back <- ev
				}
			})
			defer cancel()
			startMember(t, m)
			first := m.Node().Status().Czxid
			if err := m.SetPayload(ctx, []byte("p2")); err != nil {
				t.Fatal(err)
			}
			err := m.SetPayload(ctx, []byte(strings.Repeat("x", 2<<20)))
			if !errors.Is(err, framework.ErrDataTooLarge) {
				t.Fatalf("SetPayload of 2 MiB = %v, want ErrDataTooLarge", err)
			}
			if got := string(m.Members()["m1"]); got != "p2" {
				t.Fatalf("Members after the refused payload: %d bytes, want p2", len(got))
			}
			if tc.expire {
				proxy.Cut()
				testkit.WaitClosed(t, lost, "Recreating")
				proxy.Restore()
				testkit.WaitState(t, c, connstate.Reconnected)
			} else if err := admin.Delete(ctx, "/g/m1"); err != nil {
				t.Fatal(err)
			}
			timer := time.NewTimer(testkit.Deadline)
			defer timer.Stop()
		wait:
			for {
				select {
				case ev := <-back:
					if ev.Czxid != first {
						break wait
					}
				case <-timer.C:
					t.Fatalf("the member never came back: %+v", m.Node().Status())
				}
			}
			b, st, err := admin.Get(ctx, "/g/m1")
			if err != nil || st.EphemeralOwner != c.SessionID() || string(b) != "p2" {
				t.Fatalf("member node: %d bytes, %+v, %v; want p2 owned by 0x%x", len(b), st, err, c.SessionID())
			}
			awaitMembers(t, m, map[string]string{"m1": "p2"})
		})
	}
}
