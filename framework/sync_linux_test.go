//go:build linux

package framework

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gocurator/curator/zktest"
)

// pausedServer is a member of an ensemble whose JVM can be frozen
// (SIGSTOP) and thawed (SIGCONT): while frozen it neither receives the
// leader's proposals and commits nor answers its clients, which the
// kernel keeps buffered for it.
type pausedServer struct {
	srv *zktest.Server
	pid int
}

// findJVM finds srv's JVM among this user's processes by its directory on
// the command line (its zoo.cfg).
func findJVM(t *testing.T, srv *zktest.Server) pausedServer {
	t.Helper()
	procs, err := filepath.Glob("/proc/[0-9]*/cmdline")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err != nil || !strings.Contains(string(b), srv.Dir()) || !strings.Contains(string(b), "QuorumPeerMain") {
			continue
		}
		pid, err := strconv.Atoi(filepath.Base(filepath.Dir(p)))
		if err == nil {
			return pausedServer{srv: srv, pid: pid}
		}
	}
	t.Fatalf("no JVM of %s (dir %s) in /proc", srv.Addr(), srv.Dir())
	return pausedServer{}
}

func (p pausedServer) freeze(t *testing.T) {
	t.Helper()
	if err := syscall.Kill(p.pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
}

func (p pausedServer) thaw(t *testing.T) {
	t.Helper()
	if err := syscall.Kill(p.pid, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
}

// lagRead makes follower f lag behind a write and reads on it: with f
// frozen, writer sets path to want through another member (the leader
// and the other follower are a quorum, so the write commits and returns),
// then the read starts, its request waiting in f's socket, and f thaws
// with the proposal, the commit and the read all pending at once. With
// sync, the read is Sync then Get. It returns what the read saw.
func lagRead(t *testing.T, f pausedServer, writer, reader *Client, path, want string, sync bool) string {
	t.Helper()
	ctx := testCtx(t)
	f.freeze(t)
	thawed := false
	defer func() {
		if !thawed {
			f.thaw(t)
		}
	}()
	if _, err := writer.Set(ctx, path, []byte(want), -1); err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 1)
	errs := make(chan error, 1)
	go func() {
		if sync {
			if err := reader.Sync(ctx, path); err != nil {
				errs <- err
				return
			}
		}
		data, _, err := reader.Get(ctx, path)
		if err != nil {
			errs <- err
			return
		}
		got <- string(data)
	}()
	// The read must be on its way before the thaw: there is no event for
	// "written to a frozen server's socket", so give the client's send
	// loop a moment (a missing wait makes the read later, never staler).
	time.Sleep(20 * time.Millisecond)
	f.thaw(t)
	thawed = true
	select {
	case s := <-got:
		return s
	case err := <-errs:
		t.Fatal(err)
	case <-ctx.Done():
		t.Fatal(ctx.Err())
	}
	return ""
}

// A client on a follower that lags behind a write made through another
// member: its Get alone may return the old data (ZooKeeper's reads are
// served by the member's own copy), Sync then Get never does.
func TestSyncOnLaggingFollower(t *testing.T) {
	ens := zktest.StartEnsemble(t, 3)
	ctx := testCtx(t)
	leader, err := ens.AwaitLeader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var follower *zktest.Server
	for _, s := range ens.Servers() {
		if s != leader {
			follower = s
			break
		}
	}
	f := findJVM(t, follower)
	writer := connect(t, leader.Addr())
	reader := connect(t, follower.Addr(), WithSessionTimeout(10*time.Second))
	const path = "/lag"
	if _, err := writer.Create(ctx, path, []byte("0")); err != nil {
		t.Fatal(err)
	}
	// The follower may not have applied the create yet (a loaded run read
	// "node does not exist" below): the rounds measure stale data, so
	// start from a follower that has the node.
	if err := reader.Sync(ctx, path); err != nil {
		t.Fatal(err)
	}
	// First the setup's proof: without Sync the follower is seen lagging
	// (about one read in two on a 2-core machine), else the rounds below
	// would prove nothing.
	const maxPlain = 30
	plain := 0
	for stale := false; !stale; {
		if plain++; plain > maxPlain {
			t.Fatalf("no stale read in %d reads without Sync: the follower never lagged", maxPlain)
		}
		want := fmt.Sprintf("plain-%d", plain)
		got := lagRead(t, f, writer, reader, path, want, false)
		stale = got != want
		if stale {
			t.Logf("without Sync, read %d on the lagging follower saw %q after %q was written", plain, got, want)
		}
	}
	// A Sync that did not wait for the leader would fail one of these
	// rounds with a probability of about 1 - 2^-10.
	const rounds = 10
	for i := 1; i <= rounds; i++ {
		want := fmt.Sprintf("synced-%d", i)
		if got := lagRead(t, f, writer, reader, path, want, true); got != want {
			t.Fatalf("round %d: Sync then Get on the lagging follower read %q, want %q", i, got, want)
		}
	}
}
