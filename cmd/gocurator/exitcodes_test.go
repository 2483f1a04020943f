package main

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/group"
	"github.com/gocurator/curator/recipes/leader"
	"github.com/gocurator/curator/recipes/mutex"
	"github.com/gocurator/curator/recipes/rwlock"
	"github.com/gocurator/curator/recipes/semaphore"
)

// Every exit status docs/cli.md tables, from the binary: a script tells
// the cases apart by status alone, and a command line gocurator cannot
// understand, or a path that holds another recipe, runs nothing.
func TestExitCodes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := testkit.Ctx(t)
	other := e.connect()

	// A held mutex, for --wait.
	held := mutex.New(other, "/held")
	if err := held.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	// Another recipe's layout at each of these paths.
	for _, c := range e.clientsN(2) {
		if err := rwlock.New(c, "/catalog").ReadLock().Acquire(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := semaphore.New(other, "/exports", 3, semaphore.CuratorV2()).AcquireN(ctx, 3); err != nil {
		t.Fatal(err)
	}
	if _, err := leader.New(other, "/election").Campaign(ctx); err != nil {
		t.Fatal(err)
	}
	member := group.New(other, "/workers", "go-1", nil)
	if err := member.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = member.Close(context.Background()) })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().String()
	ln.Close()
	dir := t.TempDir()
	notExec := filepath.Join(dir, "not-executable")
	if err := os.WriteFile(notExec, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name string
		args []string // after --zk; a "JOB" argument becomes a command that leaves a file
		code int
		want string // in the one line on stderr ("" for none: stdout then has wantOut)
		ran  bool   // whether the job ran
	}{
		// A mistyped subcommand under a group: exit 2, the nearest command, nothing run.
		{"leader exec for elect exec", []string{"leader", "exec", "/x", "--", "JOB"}, 2, `unknown command "exec" for "gocurator leader"; did you mean "gocurator elect exec"?`, false},
		{"locks list", []string{"locks", "list", "/x"}, 2, `did you mean "gocurator locks ls"?`, false},
		{"elect show", []string{"elect", "show", "/x"}, 2, `did you mean "gocurator leader show"?`, false},
		{"semaphore ls", []string{"semaphore", "ls", "/x"}, 2, `did you mean "gocurator locks ls"?`, false},
		{"leader ls is leader show, not group ls", []string{"leader", "ls", "/x"}, 2, `did you mean "gocurator leader show"?`, false},
		{"atomic show", []string{"atomic", "show", "/x"}, 2, `did you mean "gocurator atomic get"?`, false},
		{"tree ls", []string{"tree", "ls", "/x"}, 2, `did you mean "gocurator ls"?`, false},
		{"group alone", []string{"locks"}, 2, "gocurator locks needs a subcommand: ls, watch", false},
		{"completion of nothing", []string{"completion", "tcsh"}, 2, `unknown command "tcsh" for "gocurator completion"`, false},
		{"version with an argument", []string{"version", "now"}, 2, `unknown command "now" for "gocurator version"`, false},
		{"help for nothing", []string{"help", "nosuch"}, 2, `no help topic "nosuch"`, false},
		{"help for a mistyped subcommand", []string{"help", "locks", "list"}, 2, `no help topic "locks list"; did you mean "gocurator locks ls"?`, false},
		{"zero timeout", []string{"--timeout", "0", "locks", "ls", "/"}, 2, "--timeout 0s: must be positive", false},
		{"-E out of range", []string{"exec", "-E", "300", "/l", "--", "JOB"}, 2, "-E 300", false},
		// Cannot connect.
		{"unreachable server", []string{"--zk", dead, "--timeout", "1s", "locks", "ls", "/"}, exitNoConnect, "cannot connect to ZooKeeper at " + dead, false},
		{"unreachable server, exec", []string{"--zk", dead, "--timeout", "1s", "exec", "/l", "--", "JOB"}, exitNoConnect, "cannot connect", false},
		// The command: not found, not runnable, its own status.
		{"command not found", []string{"exec", "/l", "--", "no-such-command-gocurator"}, exitNotFound, "no-such-command-gocurator", false},
		{"command not found, path", []string{"exec", "/l", "--", "/no/such/cmd"}, exitNotFound, "/no/such/cmd", false},
		{"command not executable", []string{"exec", "/l", "--", notExec}, exitCannotRun, "not-executable", false},
		{"command's status", []string{"exec", "/l", "--", "sh", "-c", "exit 7"}, 7, "", false},
		// Not acquired within --wait; -E picks the status.
		{"not acquired", []string{"exec", "--wait", "300ms", "/held", "--", "JOB"}, exitNotAcquired, "/held: not acquired within 300ms (--wait)", false},
		{"not acquired, -E", []string{"exec", "--wait", "300ms", "-E", "9", "/held", "--", "JOB"}, 9, "not acquired", false},
		{"not leading, -E", []string{"elect", "exec", "--wait", "300ms", "--conflict-exit-code", "10", "/election", "--", "JOB"}, 10, "not acquired", false},
		// Another recipe's layout: refused, nothing run.
		{"mutex on a read-write lock", []string{"exec", "/catalog", "--", "JOB"}, exitLayout, "/catalog holds a read/write lock (2 holders, 0 waiters), not a mutex or V1 semaphore", false},
		{"mutex on a V2 semaphore", []string{"exec", "/exports", "--", "JOB"}, exitLayout, "/exports holds a V2 semaphore", false},
		{"mutex on a latch", []string{"exec", "/election", "--", "JOB"}, exitLayout, "/election holds a leader latch", false},
		{"V1 semaphore on a V2 one", []string{"exec", "-n", "5", "/exports", "--", "JOB"}, exitLayout, "/exports holds a V2 semaphore", false},
		{"V2 semaphore on a read-write lock", []string{"exec", "-n", "5", "--v2", "/catalog", "--", "JOB"}, exitLayout, "holds a read/write lock", false},
		{"V2 semaphore, smaller max", []string{"exec", "-n", "2", "--v2", "/exports", "--", "JOB"}, exitLayout, "3 leases are held at once, more than -n 2 allows", false},
		{"latch on a mutex", []string{"elect", "exec", "/held", "--", "JOB"}, exitLayout, "/held holds a mutex or V1 semaphore (1 holder, 0 waiters), not a leader latch", false},
		{"mutex on a group", []string{"exec", "/workers", "--", "JOB"}, exitLayout, "/workers is a group (1 member), not a mutex or V1 semaphore; nothing run (see gocurator group ls /workers)", false},
		// What works still works.
		{"mutex", []string{"exec", "/free", "--", "JOB"}, 0, "", true},
		{"V2 semaphore, same max", []string{"exec", "-n", "4", "--v2", "--wait", "20s", "/exports", "--", "JOB"}, 0, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			marker := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_"))
			args := []string{"--zk", e.zk}
			for _, a := range tc.args {
				if a == "JOB" {
					args = append(args, "touch", marker)
					continue
				}
				args = append(args, a)
			}
			r := e.runIn("", args...)
			if r.code != tc.code {
				t.Fatalf("exit %d, want %d; stderr %q", r.code, tc.code, r.stderr)
			}
			if tc.want == "" {
				if r.stderr != "" {
					t.Fatalf("stderr %q, want none", r.stderr)
				}
			} else if lines := strings.Split(strings.TrimRight(r.stderr, "\n"), "\n"); len(lines) != 1 ||
				!strings.HasPrefix(lines[0], "gocurator: ") || !strings.Contains(lines[0], tc.want) || strings.Contains(r.stderr, "Usage:") {
				t.Fatalf("stderr %q, want one line with %q", r.stderr, tc.want)
			}
			if _, err := os.Stat(marker); (err == nil) != tc.ran {
				t.Fatalf("the job ran: %v, want %v", err == nil, tc.ran)
			}
		})
	}
}

// clientsN returns n more clients (sessions) in the chroot.
func (e *env) clientsN(n int) []*framework.Client {
	out := make([]*framework.Client, n)
	for i := range out {
		out[i] = e.connect()
	}
	return out
}

// version and --version print the version from the build info, exit 0.
func TestVersion(t *testing.T) {
	t.Parallel()
	e := &env{t: t}
	for _, args := range [][]string{{"version"}, {"--version"}} {
		r := e.runIn("", args...).ok(t)
		if !strings.HasPrefix(r.stdout, "gocurator ") || !strings.Contains(r.stdout, "go1.") || strings.Count(r.stdout, "\n") != 1 {
			t.Fatalf("%v: %q", args, r.stdout)
		}
	}
}

// revoke and break print one JSON document with --json; break with
// nobody to answer its question says to pass --yes.
func TestRevokeBreakJSON(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := testkit.Ctx(t)
	m := mutex.New(e.connect(), "/orders")
	if err := m.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	var rdoc struct {
		Node      string `json:"node"`
		Requested bool   `json:"revocation_requested"`
	}
	r := e.run("--json", "revoke", m.Node()).ok(t)
	if err := json.Unmarshal([]byte(r.stdout), &rdoc); err != nil || rdoc.Node != m.Node() || !rdoc.Requested {
		t.Fatalf("revoke --json: %v %+v\n%s", err, rdoc, r.stdout)
	}

	r = e.run("break", "--force", m.Node())
	if r.code != 1 || !strings.Contains(r.stderr, "pass --yes") || !strings.Contains(r.stderr, "nothing deleted") {
		t.Fatalf("break with no answer: exit %d, stderr %q", r.code, r.stderr)
	}
	var bdoc struct {
		Node      string    `json:"node"`
		Session   string    `json:"session"`
		Connected string    `json:"connected"`
		Created   time.Time `json:"created"`
		Token     int64     `json:"token"`
		Deleted   bool      `json:"deleted"`
	}
	r = e.run("--json", "break", "--force", "--yes", m.Node()).ok(t)
	if err := json.Unmarshal([]byte(r.stdout), &bdoc); err != nil || bdoc.Node != m.Node() || !bdoc.Deleted ||
		bdoc.Token != m.FencingToken() || bdoc.Connected != "yes" || bdoc.Created.IsZero() {
		t.Fatalf("break --json: %v %+v\n%s", err, bdoc, r.stdout)
	}
	if left := testkit.Children(t, e.client, "/orders"); len(left) != 0 {
		t.Fatalf("after break: %v", left)
	}
}

// locks ls -r on a tree with no recipe in use answers "none", status 0;
// a mutex layout with waiters may be a V1 semaphore, and says so.
func TestLocksLsNoneAndV1Note(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := testkit.Ctx(t)
	for _, p := range []string{"/plain", "/plain/a", "/plain/b"} {
		if _, err := e.client.Create(ctx, p, nil); err != nil {
			t.Fatal(err)
		}
	}
	if r := e.run("locks", "ls", "-r", "/plain").ok(t); !strings.Contains(r.stdout, "/plain: no lock, semaphore or election is in use") {
		t.Fatalf("locks ls -r: %q", r.stdout)
	}
	sem := semaphore.New(e.client, "/v1", 2, semaphore.CuratorV1())
	if _, err := sem.AcquireN(ctx, 2); err != nil {
		t.Fatal(err)
	}
	r := e.run("locks", "ls", "/v1").ok(t)
	if !strings.Contains(r.stdout, "mutex or V1 semaphore: pass --max") {
		t.Fatalf("locks ls of a V1 semaphore: %q", r.stdout)
	}
}

// leader show --json tells whether sessions are known, as locks ls does;
// locks watch --json stamps each view.
func TestLeaderShowAndWatchJSON(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := testkit.Ctx(t)
	if _, err := leader.New(e.connect(), "/election", leader.WithID("a")).Campaign(ctx); err != nil {
		t.Fatal(err)
	}
	var ldoc struct {
		Sessions string `json:"sessions"`
	}
	r := e.run("--json", "leader", "show", "/election").ok(t)
	if err := json.Unmarshal([]byte(r.stdout), &ldoc); err != nil || ldoc.Sessions != "complete" {
		t.Fatalf("leader show --json: %v %+v\n%s", err, ldoc, r.stdout)
	}
	var wdoc struct {
		Time time.Time `json:"time"`
	}
	before := time.Now()
	r = e.run("--json", "locks", "watch", "--updates", "1", "/election").ok(t)
	if err := json.Unmarshal([]byte(r.stdout), &wdoc); err != nil || wdoc.Time.Before(before.Add(-time.Second)) {
		t.Fatalf("locks watch --json: %v %+v\n%s", err, wdoc, r.stdout)
	}
}
