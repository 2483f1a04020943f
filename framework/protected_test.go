package framework

import (
	"context"
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

// Pitfall 6: the reply to a protected ephemeral create is lost and the
// session expires before the retry looks. The node found then belongs to
// the dead session (the server has not expired it yet): it must be
// deleted and made again, never returned as ours.
func TestProtectedCreateAcrossSessionExpiry(t *testing.T) {
	srv := server(t)
	ns := newNamespace(t)
	proxy := zktest.NewProxy(t, srv.Addr())
	// The client declares Lost at half the session timeout, so the server
	// still holds the old session (and its node) when the retry looks.
	c := connect(t, proxy.Addr(), WithNamespace(ns),
		WithSessionTimeout(4*time.Second), WithSessionExpiryPercent(50),
		WithRetryPolicy(retry.NTimes(100, 100*time.Millisecond)))
	direct := connectNS(t, ns)
	ctx := testCtx(t)
	if _, err := c.Create(ctx, "/dir", nil); err != nil {
		t.Fatal(err)
	}
	_, _, childW, err := direct.ChildrenW(ctx, "/dir")
	if err != nil {
		t.Fatal(err)
	}
	states := record(c)
	defer states.cancel()
	first := c.SessionID()

	fired := proxy.LoseNextCreateReply()
	type result struct {
		path string
		err  error
	}
	done := make(chan result, 1)
	go func() {
		p, err := c.Create(ctx, "/dir/lock-", nil, WithMode(EphemeralSequential), Protected())
		done <- result{p, err}
	}()
	waitClosed(t, fired, testTimeout, "lost-reply fault")
	proxy.Cut()
	// The old session's node is there while the client is cut off.
	waitEvent(t, childW, testTimeout, "the old session's node")
	old, _, err := direct.Children(ctx, "/dir")
	if err != nil || len(old) != 1 {
		t.Fatalf("children while cut = %q, %v", old, err)
	}
	states.expect(t, testTimeout, connstate.Suspended, connstate.Lost)
	proxy.Restore()
	states.expect(t, testTimeout, connstate.Reconnected)

	r := waitEvent(t, done, testTimeout, "the protected create")
	if r.err != nil {
		t.Fatalf("protected create across a session expiry: %v", r.err)
	}
	second := c.SessionID()
	if second == first || second == 0 {
		t.Fatalf("session %#x after Lost, want a new one (old %#x)", second, first)
	}
	st, err := direct.Exists(ctx, r.path)
	if err != nil || st == nil {
		t.Fatalf("returned node %s: %+v, %v", r.path, st, err)
	}
	if st.EphemeralOwner != second {
		t.Fatalf("Create returned %s owned by session %#x, want the live session %#x (old %#x)",
			r.path, st.EphemeralOwner, second, first)
	}
	if _, name := SplitPath(r.path); name == old[0] {
		t.Fatalf("Create returned the dead session's node %s", name)
	}
	// The dead session's node goes (deleted by the retry, or expired).
	eventually(t, testTimeout, "only the live session's node left", func() (bool, error) {
		kids, _, err := direct.Children(ctx, "/dir")
		return err == nil && len(kids) == 1 && "/dir/"+kids[0] == r.path, err
	})
}

// Pitfall 2: a protected create that fails after its request reached the
// server (retries exhausted, or ctx ended) leaves no node behind: the
// background clean-up finds it by its UUID once the connection is back.
func TestProtectedCreateFailureLeavesNothing(t *testing.T) {
	// In the deadline case every frame is delayed by 400ms each way, so
	// the create reaches the server (400ms) and its connection is seen
	// closed (800ms) before the deadline, and a new connection cannot be
	// made (800ms more) before it: the retry that would find the node
	// never runs. (A redial at once used to recover within 300ms.)
	tests := []struct {
		name    string
		policy  retry.Policy
		timeout time.Duration
		delay   time.Duration
	}{
		{"retries exhausted", retry.NTimes(0, 0), testTimeout, 0},
		{"deadline", retry.Forever(50 * time.Millisecond), 1200 * time.Millisecond, 400 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := server(t)
			ns := newNamespace(t)
			proxy := zktest.NewProxy(t, srv.Addr())
			c := connect(t, proxy.Addr(), WithNamespace(ns), WithSessionTimeout(10*time.Second),
				WithRetryPolicy(tt.policy))
			direct := connectNS(t, ns)
			ctx := testCtx(t)
			if _, err := c.Create(ctx, "/dir", nil); err != nil {
				t.Fatal(err)
			}
			_, _, childW, err := direct.ChildrenW(ctx, "/dir")
			if err != nil {
				t.Fatal(err)
			}

			fired := proxy.LoseNextCreateReply()
			proxy.SetDelay(tt.delay)
			cctx, cancel := context.WithTimeout(ctx, tt.timeout)
			p, err := c.Create(cctx, "/dir/node", nil, Protected())
			cancel()
			proxy.SetDelay(0)
			if err == nil {
				t.Fatalf("Create = %q, nil; want an error", p)
			}
			waitClosed(t, fired, testTimeout, "lost-reply fault")
			waitEvent(t, childW, testTimeout, "the node the server made")
			eventually(t, testTimeout, "no node left by the failed create", func() (bool, error) {
				kids, _, err := direct.Children(ctx, "/dir")
				return err == nil && len(kids) == 0, err
			})
		})
	}
}
