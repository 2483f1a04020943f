package framework

import (
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/connstate"
	"github.com/gocurator/curator/internal/clock"
	"github.com/gocurator/curator/zktest"
)

// The tracker's list is used on the next reconnection (CURATOR-551), with
// the chroot kept (CURATOR-593/611), from a configuration whose client
// address is the wildcard (not dialled, CURATOR-384/402) and whose members
// are named by a DNS name (kept, not resolved, CURATOR-638/664). The
// client connects through a proxy that is not in the configuration; once
// the proxy cuts it off, the only way back to its session is the tracked
// list.
func TestEnsembleTrackerReconnectsToConfiguredMembers(t *testing.T) {
	ctx := testCtx(t)
	ens := zktest.StartEnsembleWith(t, 1, zktest.WithReconfig(),
		zktest.WithConfigHost("localhost"), zktest.WithClientAddress("0.0.0.0"))
	srv := ens.Servers()[0]
	_, port, _ := net.SplitHostPort(srv.Addr())
	proxy := zktest.NewProxy(t, srv.Addr())
	ns := newNamespace(t)
	c := connect(t, proxy.Addr()+"/"+ns, WithEnsembleTracker(), WithNamespace("app"), WithSessionTimeout(20*time.Second))
	if got, want := c.ConnectString(), proxy.Addr()+"/"+ns; got != want {
		t.Fatalf("ConnectString() before the tracker read = %q, want %q", got, want)
	}
	want := "localhost:" + port + "/" + ns
	eventually(t, testTimeout, "the tracked connect string", func() (bool, error) {
		got := c.ConnectString()
		return got == want, fmt.Errorf("ConnectString() = %q, want %q", got, want)
	})
	sid := c.SessionID()
	states := record(c)
	defer states.cancel()
	proxy.Cut()
	states.expect(t, testTimeout, connstate.Suspended, connstate.Reconnected)
	if c.SessionID() != sid {
		t.Fatalf("session 0x%x after the reconnection, want 0x%x", c.SessionID(), sid)
	}
	if got := c.Conn().Server(); got != "localhost:"+port {
		t.Fatalf("reconnected to %q, want the configured member localhost:%s", got, port)
	}
	// The chroot and namespace are the same after the reconnection.
	if _, err := c.Create(ctx, "/after", nil, WithMode(Ephemeral)); err != nil {
		t.Fatal(err)
	}
	raw := connect(t, srv.Addr())
	if st, err := raw.Exists(ctx, "/"+ns+"/app/after"); err != nil || st == nil {
		t.Fatalf("node not under the chroot after the reconnection: %v, %v", st, err)
	}
	// The tracker holds one watch, on the configuration, and nothing else.
	awaitServerWatches(t, srv.Addr(), c, ConfigPath)
	sid = c.SessionID()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	awaitNoServerWatches(t, srv.Addr(), sid)
}

// A member replaced by reconfiguration (a new server joins, a follower
// leaves): the tracking client, which was given only the leaving member,
// learns the new members, is dropped by the leaving one, and reconnects
// its session to the others.
func TestEnsembleTrackerMemberReplaced(t *testing.T) {
	ctx := testCtx(t)
	ens := zktest.StartEnsembleWith(t, 3, zktest.WithReconfig())
	leader, err := ens.Leader()
	if err != nil {
		t.Fatal(err)
	}
	var leaving *zktest.Server
	for _, s := range ens.Servers() {
		if s != leader {
			leaving = s
			break
		}
	}
	ns := newNamespace(t)
	// The administrator reconfigures through a proxy that loses the reply.
	proxy := zktest.NewProxy(t, leader.Addr())
	admin := connect(t, proxy.Addr())
	c := connect(t, leaving.Addr()+"/"+ns, WithEnsembleTracker(), WithSessionTimeout(20*time.Second))
	cfg, err := c.Config(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Servers(); !slices.Equal(got, strings.Split(ens.ConnectString(), ",")) {
		t.Fatalf("Config().Servers() = %v, want %s", got, ens.ConnectString())
	}
	if _, err := c.Create(ctx, "/before", nil, WithMode(Ephemeral)); err != nil {
		t.Fatal(err)
	}
	joiner, err := ens.AddServer()
	if err != nil {
		t.Fatal(err)
	}
	// The reconfiguration is applied, its reply lost with the
	// connection; the retry, refused as the version has moved on, finds
	// its own change made and succeeds.
	lost := proxy.LoseNextReconfigReply()
	newCfg, err := admin.Reconfig(ctx, Joining(joiner.ConfigLine()), Leaving(int64(leaving.ID())), FromConfig(cfg.Version))
	if err != nil {
		t.Fatal(err)
	}
	waitClosed(t, lost, testTimeout, "the reconfig reply to be lost")
	if _, ok := newCfg.Member(int64(leaving.ID())); ok || newCfg.Version <= cfg.Version {
		t.Fatalf("Reconfig returned %+v", newCfg)
	}
	if m, ok := newCfg.Member(int64(joiner.ID())); !ok || m.ClientAddr() != joiner.Addr() {
		t.Fatalf("Reconfig returned %+v without the joiner at %s", newCfg, joiner.Addr())
	}
	var want []string
	for _, s := range ens.Servers() {
		if s != leaving {
			want = append(want, s.Addr())
		}
	}
	wantString := strings.Join(want, ",") + "/" + ns
	eventually(t, testTimeout, "the tracked connect string", func() (bool, error) {
		got := c.ConnectString()
		return got == wantString, fmt.Errorf("ConnectString() = %q, want %q", got, wantString)
	})
	sid := c.SessionID()
	if err := leaving.Kill(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Create(ctx, "/after", nil, WithMode(Ephemeral)); err != nil {
		t.Fatal(err)
	}
	if c.SessionID() != sid {
		t.Fatalf("session 0x%x after the member left, want 0x%x", c.SessionID(), sid)
	}
	if got := c.Conn().Server(); !slices.Contains(want, got) {
		t.Fatalf("connected to %q, want one of %v", got, want)
	}
	for _, p := range []string{"/before", "/after"} {
		if st, err := admin.Exists(ctx, "/"+ns+p); err != nil || st == nil || st.EphemeralOwner != sid {
			t.Fatalf("%s under the chroot: %+v, %v", p, st, err)
		}
	}
	// A conditional reconfiguration of a configuration that has moved on
	// is refused.
	if _, err := admin.Reconfig(ctx, Leaving(int64(joiner.ID())), FromConfig(cfg.Version)); !errors.Is(err, zk.ErrBadVersion) {
		t.Fatalf("Reconfig from a stale version = %v, want zk.ErrBadVersion", err)
	}
}

// After a session loss the client's new connection dials the tracked
// members too (CURATOR-551 for a new session), not the connect string's
// servers. The members are handed to the tracker directly here (the
// package's standalone server has no dynamic configuration): a second
// proxy, cut until the old session is declared lost on the fake clock,
// while the connect string's proxy is black-holed for good.
func TestEnsembleTrackerNewSessionUsesTrackedList(t *testing.T) {
	srv := server(t)
	oldPath, newPath := zktest.NewProxy(t, srv.Addr()), zktest.NewProxy(t, srv.Addr())
	fake := clock.NewFake(time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC))
	c := connect(t, oldPath.Addr(), WithNamespace(newNamespace(t)), WithEnsembleTracker(),
		WithSessionTimeout(2*time.Second), withClock(fake))
	first := c.SessionID()
	host, port, _ := net.SplitHostPort(newPath.Addr())
	c.trackConfig(EnsembleConfig{Version: 1, Members: []Member{{ID: 1, Host: host, QuorumPort: 1, ElectionPort: 2, Role: "participant", ClientHost: "0.0.0.0", ClientPort: atoi(t, port)}}})
	if got := c.ConnectString(); got != newPath.Addr() {
		t.Fatalf("ConnectString() = %q, want the tracked %s", got, newPath.Addr())
	}
	// An older configuration does not undo it.
	c.trackConfig(EnsembleConfig{Version: 0, Members: []Member{{ID: 1, Host: "127.0.0.1", ClientPort: 1}}})
	if got := c.ConnectString(); got != newPath.Addr() {
		t.Fatalf("ConnectString() after an older configuration = %q", got)
	}
	states := record(c)
	defer states.cancel()
	newPath.Cut()
	oldPath.BlackHole()
	states.expect(t, testTimeout, connstate.Suspended)
	for _, p := range fake.Pending() {
		fake.Advance(p.Sub(fake.Now()))
	}
	states.expect(t, testTimeout, connstate.Lost)
	newPath.Restore()
	states.expect(t, testTimeout, connstate.Reconnected)
	if second := c.SessionID(); second == 0 || second == first {
		t.Fatalf("session after Lost = %#x, want a new one (old %#x)", second, first)
	}
	if got := c.Conn().Server(); got != newPath.Addr() {
		t.Fatalf("new session on %q, want the tracked %s", got, newPath.Addr())
	}
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
