package main

import (
	"net"
	"strings"
	"testing"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/mutex"
)

// Bad input gets one line on stderr, "gocurator: ...", nothing on stdout
// and a non-zero exit; never a stack trace or a usage dump.
func TestBadInput(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := testkit.Ctx(t)
	for _, p := range []string{"/plain", "/plain/a", "/plain/b"} {
		if _, err := e.client.Create(ctx, p, []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	acl := zk.DigestACL(zk.PermAll, "ops", "secret")
	if _, err := e.client.Create(ctx, "/secure", nil, framework.WithACL(acl)); err != nil {
		t.Fatal(err)
	}
	held := mutex.New(e.client, "/held")
	if err := held.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	defer held.Release(ctx)
	_, heldName := framework.SplitPath(held.Node())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().String() // nothing answers once closed
	ln.Close()

	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"unknown path", []string{"--zk", e.zk, "locks", "ls", "/nope"}, 1, "/nope: no such node"},
		{"not a recipe", []string{"--zk", e.zk, "locks", "ls", "/plain"}, exitLayout, "/plain is no recipe (children: a, b), not a lock, semaphore or election; use -r"},
		{"not a semaphore", []string{"--zk", e.zk, "semaphore", "leases", "/plain"}, exitLayout, "/plain is no recipe (children: a, b)"},
		{"not an election", []string{"--zk", e.zk, "leader", "show", "/plain"}, exitLayout, "/plain is no recipe (children: a, b)"},
		{"a lock node for a lock", []string{"--zk", e.zk, "locks", "ls", "/held/" + heldName}, exitLayout, "is a participant of the mutex or V1 semaphore at /held, not a lock, semaphore or election (see gocurator locks ls /held)"},
		{"revoke a plain node", []string{"--zk", e.zk, "revoke", "/plain/a"}, exitLayout, "/plain/a is no recipe (a node with 1 byte of data), not a lock, lease or latch node; nothing done"},
		{"unreachable server", []string{"--zk", dead, "--timeout", "1s", "locks", "ls", "/"}, exitNoConnect, "cannot connect to ZooKeeper at " + dead + " within 1s"},
		{"no auth", []string{"--zk", e.zk, "locks", "ls", "/secure"}, 1, "/secure: not authorised to read it (pass --auth user:password)"},
		{"wrong auth", []string{"--zk", e.zk, "--auth", "ops:wrong", "locks", "ls", "/secure"}, 1, "not authorised to read it with the credentials given"},
		{"auth not user:password", []string{"--zk", e.zk, "--auth", "ops", "locks", "ls", "/secure"}, 2, "digest credentials are user:password"},
		{"relative path", []string{"--zk", e.zk, "locks", "ls", "locks"}, 2, `"locks" is not a valid ZooKeeper path`},
		{"bad connect string", []string{"--zk", "host:notaport", "locks", "ls", "/"}, 2, "--zk"},
		{"unknown command", []string{"--zk", e.zk, "lcks"}, 2, `unknown command "lcks"`},
		{"unknown flag", []string{"--zk", e.zk, "locks", "ls", "--bogus", "/"}, 2, "unknown flag: --bogus"},
		{"missing path", []string{"--zk", e.zk, "locks", "ls"}, 2, "accepts 1 arg(s)"},
		{"exec without --", []string{"--zk", e.zk, "exec", "/l", "true"}, 2, "exec takes PATH, then -- and the command"},
		{"exec unknown command", []string{"--zk", e.zk, "exec", "/l", "--", "/no/such/cmd"}, exitNotFound, "/no/such/cmd"},
		{"break without --force", []string{"--zk", e.zk, "break", "/plain/a"}, 2, "pass --force"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.runIn("", tc.args...)
			lines := strings.Split(strings.TrimRight(r.stderr, "\n"), "\n")
			if r.code != tc.code || len(lines) != 1 || !strings.HasPrefix(lines[0], "gocurator: ") ||
				!strings.Contains(lines[0], tc.want) || r.stdout != "" {
				t.Fatalf("exit %d (want %d), stdout %q, stderr %q (want one line with %q)", r.code, tc.code, r.stdout, r.stderr, tc.want)
			}
			for _, bad := range []string{"goroutine ", "panic", "Usage:"} {
				if strings.Contains(r.stderr, bad) {
					t.Fatalf("stderr has %q: %s", bad, r.stderr)
				}
			}
		})
	}
	// The right credentials read it.
	if r := e.run("--auth", "ops:secret", "locks", "ls", "/secure").ok(t); !strings.Contains(r.stdout, "no lock, semaphore or election is in use") {
		t.Fatalf("with credentials: %q", r.stdout)
	}
}
