// Package testkit holds the helpers the recipe packages' tests share:
// clients of a real ZooKeeper in a namespace of the test's own, and waits
// with a deadline (on events where there are events, else by polling the
// server).
package testkit

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"go.uber.org/goleak"

	"github.com/gocurator/curator/connstate"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/retry"
	"github.com/gocurator/curator/zktest"
)

// Deadline bounds every wait.
const Deadline = 30 * time.Second

var seq atomic.Int64

// Unique returns a name unique to the test, for namespaces and paths, so
// tests can share a server.
func Unique(t testing.TB) string {
	name := strings.NewReplacer("/", "_", " ", "_").Replace(t.Name())
	return fmt.Sprintf("t%d_%s", seq.Add(1), name)
}

// Connect returns a client of addr in namespace ns ("" for none), with a
// 10s session and a patient retry policy, closed at cleanup.
func Connect(t testing.TB, addr, ns string, opts ...framework.Option) *framework.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), Deadline)
	defer cancel()
	base := []framework.Option{
		framework.WithNamespace(ns),
		framework.WithSessionTimeout(10 * time.Second),
		framework.WithRetryPolicy(retry.BoundedExponentialBackoff(20*time.Millisecond, 500*time.Millisecond, 40)),
	}
	c, err := framework.Connect(ctx, addr, append(base, opts...)...)
	if err != nil {
		t.Fatalf("connect %s: %v", addr, err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// Ctx returns a context bounded by Deadline, cancelled at cleanup.
func Ctx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), Deadline)
	t.Cleanup(cancel)
	return ctx
}

// Children lists path's children through c; none if path is missing.
func Children(t testing.TB, c *framework.Client, path string) []string {
	t.Helper()
	ch, _, err := c.Children(Ctx(t), path)
	if errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	if err != nil {
		t.Fatalf("children %s: %v", path, err)
	}
	return ch
}

// Eventually polls cond, a server-side condition, until it holds.
func Eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	end := time.Now().Add(Deadline)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(end) {
			t.Fatalf("timed out waiting until %s", what)
		}
		<-tick.C
	}
}

// WaitState waits until c reports s, on the client's state changes.
func WaitState(t testing.TB, c *framework.Client, s connstate.State) {
	t.Helper()
	timer := time.NewTimer(Deadline)
	defer timer.Stop()
	for {
		ch := c.StateChanged()
		if c.State() == s {
			return
		}
		select {
		case <-ch:
		case <-timer.C:
			t.Fatalf("state %v never reached (now %v)", s, c.State())
		}
	}
}

// WaitClosed waits for ch to close.
func WaitClosed(t testing.TB, ch <-chan struct{}, what string) {
	t.Helper()
	timer := time.NewTimer(Deadline)
	defer timer.Stop()
	select {
	case <-ch:
	case <-timer.C:
		t.Fatalf("timed out waiting for %s", what)
	}
}

// Main runs a package's tests with one real ZooKeeper server for all of
// them, its connect string in *addr and in $GOCURATOR_ZK (where the
// examples read it, as a program would), stopped before goleak looks for
// leftover goroutines: func TestMain(m *testing.M) { testkit.Main(m, &addr) }.
func Main(m *testing.M, addr *string) {
	goleak.VerifyTestMain(withServer{m: m, addr: addr})
}

type withServer struct {
	m    *testing.M
	addr *string
}

func (w withServer) Run() int {
	srv, err := zktest.Launch()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer srv.Close()
	*w.addr = srv.ConnectString()
	if err := os.Setenv(ServersEnv, *w.addr); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return w.m.Run()
}

// ServersEnv is the variable Main sets to the server's connect string: the
// one the gocurator command reads, and the examples.
const ServersEnv = "GOCURATOR_ZK"

// FourLetterWord sends cmd (wchc, wchp, mntr, ...) to the server at addr
// (host:port) and returns its whole answer.
func FourLetterWord(addr, cmd string) (string, error) {
	conn, err := net.DialTimeout("tcp", addr, 3*time.Second)
	if err != nil {
		return "", fmt.Errorf("%s %s: %w", cmd, addr, err)
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(3 * time.Second)); err != nil {
		return "", fmt.Errorf("%s %s: %w", cmd, addr, err)
	}
	if _, err := io.WriteString(conn, cmd); err != nil {
		return "", fmt.Errorf("%s %s: %w", cmd, addr, err)
	}
	b, err := io.ReadAll(conn)
	if err != nil {
		return "", fmt.Errorf("%s %s: %w", cmd, addr, err)
	}
	return string(b), nil
}

// SessionWatches returns the full paths (namespace included) on which the
// server at addr holds a data watch of session id, from wchc: the watches
// of a test's own clients, which a count stays exact for on a server other
// tests share. (wchc lists data watches only, as wchs counts them: those
// of getData and exists, not of getChildren.)
func SessionWatches(t testing.TB, addr string, id int64) []string {
	t.Helper()
	out, err := FourLetterWord(addr, "wchc")
	if err != nil {
		t.Fatal(err)
	}
	return parseWchc(out)[id]
}

// parseWchc reads wchc's answer: a line "0x<session>" per session, then
// the paths it watches, indented.
func parseWchc(out string) map[int64][]string {
	w := map[int64][]string{}
	var (
		cur int64
		in  bool
	)
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimRight(line, "\r")
		switch trimmed := strings.TrimSpace(line); {
		case strings.HasPrefix(line, "0x"):
			id, err := strconv.ParseUint(strings.TrimPrefix(trimmed, "0x"), 16, 64)
			cur, in = int64(id), err == nil
		case in && strings.HasPrefix(trimmed, "/"):
			w[cur] = append(w[cur], trimmed)
		}
	}
	return w
}

// WatchCount returns how many data watches the sessions of clients hold
// on the server at addr (see SessionWatches).
func WatchCount(t testing.TB, addr string, clients ...*framework.Client) int {
	t.Helper()
	out, err := FourLetterWord(addr, "wchc")
	if err != nil {
		t.Fatal(err)
	}
	w := parseWchc(out)
	n := 0
	for _, c := range clients {
		n += len(w[c.SessionID()])
	}
	return n
}

// AwaitWatch waits until c's session holds a data watch on path (c's
// namespace added) on the server at addr: the server-side sign that a
// waiter has set its watch and decided to wait.
func AwaitWatch(t testing.TB, addr string, c *framework.Client, path string) {
	t.Helper()
	full := FullPath(c, path)
	Eventually(t, fmt.Sprintf("session 0x%x watches %s", c.SessionID(), full), func() bool {
		return slices.Contains(SessionWatches(t, addr, c.SessionID()), full)
	})
}

// FullPath returns path as the server sees it: with c's namespace.
func FullPath(c *framework.Client, path string) string {
	if ns := c.Namespace(); ns != "" {
		if path == "/" {
			return "/" + ns
		}
		return "/" + ns + path
	}
	return path
}

// AwaitWatchCount waits until the sessions of clients hold n data watches
// (persistent and recursive watches included: ZooKeeper 3.6-3.8 list them
// with the data watches) on the server at addr: a recipe built on
// framework.Watch checks with n = 0 that it left nothing after Close.
func AwaitWatchCount(t testing.TB, addr string, n int, clients ...*framework.Client) {
	t.Helper()
	Eventually(t, fmt.Sprintf("%d server watches of the clients", n), func() bool {
		return WatchCount(t, addr, clients...) == n
	})
}

var consLine = regexp.MustCompile(`recved=(\d+),sent=\d+,sid=0x([0-9a-f]+)`)

// Received returns how many requests the server at addr has read from the
// sessions sids, summed (the four-letter word cons). Pings count too: a
// test that counts requests takes the least of several rounds, since a
// ping only ever adds. A session the server does not list fails t.
func Received(t testing.TB, addr string, sids ...int64) int {
	t.Helper()
	out, err := FourLetterWord(addr, "cons")
	if err != nil {
		t.Fatal(err)
	}
	by := map[int64]int{}
	for _, m := range consLine.FindAllStringSubmatch(out, -1) {
		id, _ := strconv.ParseUint(m[2], 16, 64)
		n, _ := strconv.Atoi(m[1])
		by[int64(id)] = n
	}
	sum := 0
	for _, sid := range sids {
		n, ok := by[sid]
		if !ok {
			t.Fatalf("session %#x not in cons: %s", sid, out)
		}
		sum += n
	}
	return sum
}
