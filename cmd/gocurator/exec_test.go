package main

import (
	"strconv"
	"strings"
	"testing"

	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/mutex"
	"github.com/gocurator/curator/zktest"
)

// exec runs the command while the mutex is held, passes the hold's czxid
// as the token and exits with the command's status.
func TestExecTokenAndStatus(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := testkit.Ctx(t)
	const path = "/locks/nightly"

	p := e.start("--zk", e.zk, "exec", path, "--", "sh", "-c", `echo "$GOCURATOR_FENCING_TOKEN $GOCURATOR_LOCK_NODE"; read x; exit 7`)
	line := p.line(t, "the token", func(string) bool { return true })
	f := strings.Fields(line)
	if len(f) != 2 {
		t.Fatalf("command printed %q", line)
	}
	token, err := strconv.ParseInt(f[0], 10, 64)
	if err != nil {
		t.Fatalf("token %q: %v", f[0], err)
	}
	_, st, err := e.client.Get(ctx, f[1])
	if err != nil {
		t.Fatalf("the lock node %s: %v", f[1], err)
	}
	if st.Czxid != token {
		t.Fatalf("token %d, the node's czxid %d", token, st.Czxid)
	}
	// Held: nobody else gets it while the command runs.
	if ok, err := mutex.New(e.connect(), path).TryAcquire(ctx); ok || err != nil {
		t.Fatalf("TryAcquire while exec holds: %v, %v", ok, err)
	}
	_ = p.stdin.Close()
	if code := p.wait(t); code != 7 {
		t.Fatalf("exit %d, want the command's 7 (stderr %q)", code, p.stderr.String())
	}
	// Released after.
	if n := len(testkit.Children(t, e.client, path)); n != 0 {
		t.Fatalf("%d nodes left", n)
	}
	if r := e.run("exec", path, "--", "true").ok(t); r.stdout != "" {
		t.Fatalf("stdout %q", r.stdout)
	}
	// A later holder's token is larger.
	r := e.run("exec", path, "--", "sh", "-c", `echo $GOCURATOR_FENCING_TOKEN`).ok(t)
	if later, err := strconv.ParseInt(strings.TrimSpace(r.stdout), 10, 64); err != nil || later <= token {
		t.Fatalf("later token %q (%v), first %d", r.stdout, err, token)
	}
}

// The hold is lost (the connection is cut): the command gets SIGTERM and
// exec exits with its status; a command that ignores SIGTERM gets SIGKILL
// after the grace period.
func TestExecKilledWhenHoldLost(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, tc := range []struct {
		name   string
		script string
		want   int
		stderr string
	}{
		{"SIGTERM", `trap 'exit 42' TERM; echo ready; while :; do sleep 0.05; done`, 42, "sending SIGTERM"},
		{"SIGKILL", `trap '' TERM; echo ready; while :; do sleep 0.05; done`, 128 + 9, "sending SIGKILL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			proxy := zktest.NewProxy(t, addr)
			p := e.start("--zk", proxy.Addr()+"/"+e.ns, "--timeout", "2s", "exec", "--grace", "200ms",
				"/locks/"+tc.name, "--", "sh", "-c", tc.script)
			p.line(t, "ready", func(l string) bool { return l == "ready" })
			proxy.Cut()
			if code := p.wait(t); code != tc.want {
				t.Fatalf("exit %d, want %d (stderr %q)", code, tc.want, p.stderr.String())
			}
			if s := p.stderr.String(); !strings.Contains(s, "lost the hold on /locks/"+tc.name) || !strings.Contains(s, tc.stderr) {
				t.Fatalf("stderr %q", s)
			}
		})
	}
}

// exec stops its command when its lock node is deleted (gocurator break)
// or, with --revocable, when revocation is asked (gocurator revoke).
func TestExecStopsOnBreakAndRevoke(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, tc := range []struct {
		name string
		flag string
		act  func(node string) result
		why  string
	}{
		{"break", "--grace=10s", func(node string) result { return e.run("break", "--force", "--yes", node) }, "its node was deleted"},
		{"revoke", "--revocable", func(node string) result { return e.run("revoke", node) }, "revocation requested"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := e.start("--zk", e.zk, "exec", tc.flag, "/locks/"+tc.name, "--", "sh", "-c",
				`trap 'exit 42' TERM; echo "$GOCURATOR_LOCK_NODE"; while :; do sleep 0.05; done`)
			node := p.line(t, "the lock node", func(string) bool { return true })
			tc.act(node).ok(t)
			if code := p.wait(t); code != 42 {
				t.Fatalf("exit %d, want 42 (stderr %q)", code, p.stderr.String())
			}
			if s := p.stderr.String(); !strings.Contains(s, "lost the hold on /locks/"+tc.name+" ("+tc.why+")") {
				t.Fatalf("stderr %q", s)
			}
		})
	}
}
