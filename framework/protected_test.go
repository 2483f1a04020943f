package framework

import (
	"strings"
	"testing"
	"time"

	"github.com/gocurator/curator/connstate"
	"github.com/gocurator/curator/retry"
	"github.com/gocurator/curator/zktest"
)

// Pitfall 1: the server applies a create but its reply is lost with the
// connection. A plain retry would make a second node (and a lock waiter
// would then wait on itself); the protected create must find the node the
// server made and return it.
func TestProtectedCreateLostReply(t *testing.T) {
	tests := []struct {
		name string
		mode Mode
		base string
	}{
		{"ephemeral sequential", EphemeralSequential, "lock-"},
		{"persistent", Persistent, "node"},
		{"persistent sequential", PersistentSequential, "item-"},
		{"ephemeral", Ephemeral, "member"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := server(t)
			ns := newNamespace(t)
			proxy := zktest.NewProxy(t, srv.Addr())
			c := connect(t, proxy.Addr(), WithNamespace(ns),
				WithRetryPolicy(retry.NTimes(20, 100*time.Millisecond)),
				WithSessionTimeout(10*time.Second))
			direct := connectNS(t, ns)
			ctx := testCtx(t)
			states := record(c)
			defer states.cancel()

			// The parent (and the namespace) exist before the fault is
			// armed, so the create below is the only one on the wire.
			if _, err := c.Create(ctx, "/dir", nil); err != nil {
				t.Fatal(err)
			}
			sid := c.SessionID()

			fired := proxy.LoseNextCreateReply()
			got, err := c.Create(ctx, "/dir/"+tt.base, []byte("payload"), WithMode(tt.mode), Protected())
			if err != nil {
				t.Fatalf("protected create across a lost reply: %v", err)
			}
			waitClosed(t, fired, testTimeout, "lost-reply fault")
			// The connection was dropped and made again on the same session.
			states.expect(t, testTimeout, connstate.Suspended, connstate.Reconnected)
			if c.SessionID() != sid {
				t.Fatalf("session changed from %#x to %#x; the test wants the same session", sid, c.SessionID())
			}

			children, _, err := direct.Children(ctx, "/dir")
			if err != nil {
				t.Fatal(err)
			}
			if len(children) != 1 {
				t.Fatalf("children of /dir = %q, want exactly one node", children)
			}
			if want := "/dir/" + children[0]; got != want {
				t.Fatalf("Create returned %q, but the node that exists is %q", got, want)
			}
			name := children[0]
			if !IsProtected(name) {
				t.Fatalf("node %q does not carry a protected prefix", name)
			}
			stripped := StripProtected(name)
			if tt.mode.IsSequential() {
				if !hasSeq(stripped, tt.base) {
					t.Fatalf("node %q: want %q and a 10-digit sequence after the prefix", name, tt.base)
				}
			} else if stripped != tt.base {
				t.Fatalf("node %q: want %q after the prefix", name, tt.base)
			}
			data, st, err := direct.Get(ctx, got)
			if err != nil {
				t.Fatal(err)
			}
			if string(data) != "payload" {
				t.Fatalf("data = %q, want %q", data, "payload")
			}
			wantOwner := int64(0)
			if tt.mode.IsEphemeral() {
				wantOwner = sid
			}
			if st.EphemeralOwner != wantOwner {
				t.Fatalf("ephemeralOwner = %#x, want %#x", st.EphemeralOwner, wantOwner)
			}
		})
	}
}

// A protected create that works the first time makes a node named as
// Curator names it: "_c_" + a dashed UUID + "-" + the name.
func TestProtectedCreateName(t *testing.T) {
	ns := newNamespace(t)
	c := connectNS(t, ns)
	ctx := testCtx(t)
	got, err := c.Create(ctx, "/locks/lock-", nil, WithMode(EphemeralSequential), Protected(), CreatingParentContainers())
	if err != nil {
		t.Fatal(err)
	}
	parent, name := SplitPath(got)
	if parent != "/locks" {
		t.Fatalf("created %q, want it under /locks", got)
	}
	if !IsProtected(name) || !strings.HasPrefix(name, ProtectedPrefix) || name[39] != '-' {
		t.Fatalf("name %q is not a Curator protected name", name)
	}
	if uuid := name[3:39]; uuid != strings.ToLower(uuid) || strings.Count(uuid, "-") != 4 {
		t.Fatalf("UUID %q is not canonical lower-case dashed", uuid)
	}
	if !hasSeq(StripProtected(name), "lock-") {
		t.Fatalf("name %q: want lock- and a sequence after the prefix", name)
	}
	st, err := c.Exists(ctx, got)
	if err != nil || st == nil {
		t.Fatalf("Exists(%q) = %v, %v", got, st, err)
	}
	if st.EphemeralOwner != c.SessionID() {
		t.Fatalf("ephemeralOwner = %#x, want the session %#x", st.EphemeralOwner, c.SessionID())
	}
	// Curator's own data for lock nodes: the default data is the local IP.
	data, _, err := c.Get(ctx, got)
	if err != nil {
		t.Fatal(err)
	}
	if string(data) != string(c.DefaultData()) || len(data) == 0 {
		t.Fatalf("data = %q, want the default data %q", data, c.DefaultData())
	}
}
