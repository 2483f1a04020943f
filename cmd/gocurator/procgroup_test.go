//go:build linux

package main

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/internal/testkit"
)

// The process tree the tests below run as CMD: sh tree.sh starts, in the
// background, "sleep 1000" and stubborn.sh, which survives SIGTERM (and logs
// it with its parent's pid); once both are up it prints the lock node and
// runs its tail. Only CMD's own output goes to gocurator's stdout, so that
// a process left running cannot keep the test reading it.
const (
	treeHead = `echo $$ > "$D/tree.pid"
mkfifo "$D/up"
sleep 1000 >/dev/null 2>&1 &
echo $! > "$D/sleep.pid"
sh "$D/stubborn.sh" >/dev/null 2>&1 &
echo $! > "$D/stubborn.pid"
read up < "$D/up"
echo "$GOCURATOR_LOCK_NODE"
`
	stubborn = `trap 'read -r pid comm state ppid rest < /proc/$$/stat; echo "TERM $ppid" >> "$D/stubborn.log"' TERM
echo up > "$D/up"
while :; do sleep 0.05; done
`
)

// tree writes tree.sh (treeHead, then tail) and stubborn.sh into a
// directory of the test's and returns it.
func tree(t *testing.T, tail string) string {
	t.Helper()
	dir := t.TempDir()
	set := "D='" + dir + "'\n"
	for name, body := range map[string]string{"tree.sh": treeHead + tail, "stubborn.sh": stubborn} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(set+body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// proc is a process of CMD's tree, known by its pid and start time (so
// that a reused pid is not taken for it).
type proc struct {
	name  string
	pid   int
	start string
}

// readProc reads the pid in dir/name.pid; the process is SIGKILLed at
// cleanup if it is still alive then (when gocurator left it running).
func readProc(t *testing.T, dir, name string) proc {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name+".pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("%s.pid: %v", name, err)
	}
	_, start, ok := procStat(pid)
	if !ok {
		t.Fatalf("%s (pid %d) is not running", name, pid)
	}
	p := proc{name: name, pid: pid, start: start}
	t.Cleanup(func() {
		if p.alive() {
			_ = syscall.Kill(p.pid, syscall.SIGKILL)
		}
	})
	return p
}

// alive reports whether the process still runs: a zombie has ended.
func (p proc) alive() bool {
	state, start, ok := procStat(p.pid)
	return ok && start == p.start && state != "Z" && state != "X"
}

// procStat returns the state and start time of pid from /proc.
func procStat(pid int) (state, start string, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "", "", false
	}
	// The fields after the command name, which is in parentheses: state
	// is field 3, the start time field 22.
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	return f[0], f[19], true
}

// noneAlive fails the test for each process of ps still running.
func noneAlive(t *testing.T, when string, ps ...proc) {
	t.Helper()
	for _, p := range ps {
		if p.alive() {
			t.Errorf("%s: %s (pid %d) is still running", when, p.name, p.pid)
		}
	}
}

// stubbornLog returns what stubborn.sh logged: a line "TERM ppid" for each
// SIGTERM it lived through.
func stubbornLog(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "stubborn.log"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	return string(b)
}

// Losing the hold ends CMD's whole process tree, not CMD alone: with
// exec P -- sh -c "sleep &; ...", the shell used to get SIGTERM and
// gocurator exit at once, while the sleep (and a grandchild that ignores
// SIGTERM) kept running with the lock free for others. Now gocurator exits
// only when the process group is empty, the stubborn grandchild SIGKILLed
// after --grace. For exec (the node deleted, or revocation asked) and elect
// exec alike.
func TestHoldLostEndsTheWholeTree(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	breakNode := func(node string) result { return e.run("break", "--force", "--yes", node) }
	for _, tc := range []struct {
		name string
		cmd  []string
		act  func(node string) result
		why  string
	}{
		// The recipe or exec's own watch sees the deletion first: the
		// reason is worded either way.
		{"exec break", []string{"exec", "/locks/tree-break"}, breakNode, "deleted"},
		{"exec revoke", []string{"exec", "--revocable", "/locks/tree-revoke"},
			func(node string) result { return e.run("revoke", node) }, "revocation requested"},
		{"elect exec break", []string{"elect", "exec", "/elections/tree"}, breakNode, "deleted"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := tree(t, "wait\n")
			args := append([]string{"--zk", e.zk}, tc.cmd...)
			p := e.start(append(args, "--grace", "1s", "--", "sh", filepath.Join(dir, "tree.sh"))...)
			node := p.line(t, "the lock node", func(string) bool { return true })
			sh, sleep, stub := readProc(t, dir, "tree"), readProc(t, dir, "sleep"), readProc(t, dir, "stubborn")
			tc.act(node).ok(t)
			if code := exited(t, p, sh, sleep, stub); code != 128+int(syscall.SIGTERM) {
				t.Errorf("exit %d, want the shell's %d (SIGTERM)", code, 128+int(syscall.SIGTERM))
			}
			noneAlive(t, "gocurator has exited", sh, sleep, stub)
			if log := stubbornLog(t, dir); !strings.HasPrefix(log, "TERM ") {
				t.Errorf("stubborn.sh logged %q: it was not sent SIGTERM", log)
			}
			s := p.stderr.String()
			if !strings.Contains(s, "lost the hold on "+tc.cmd[len(tc.cmd)-1]+" (") || !strings.Contains(s, tc.why) ||
				!strings.Contains(s, "sending SIGKILL") {
				t.Errorf("stderr %q", s)
			}
		})
	}
}

// Processes CMD leaves behind in its group when it exits are ended (SIGTERM,
// then SIGKILL after --grace) before the lock is released: when the lock
// node is deleted, none is alive. gocurator adopts them (a child
// subreaper) so that it can reap them, and exits with CMD's status.
func TestExecEndsLeftoversBeforeRelease(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := testkit.Ctx(t)
	dir := tree(t, "read line\nexit 5\n")
	p := e.start("--zk", e.zk, "exec", "--grace", "1s", "/locks/leftovers", "--", "sh", filepath.Join(dir, "tree.sh"))
	node := p.line(t, "the lock node", func(string) bool { return true })
	sh, sleep, stub := readProc(t, dir, "tree"), readProc(t, dir, "sleep"), readProc(t, dir, "stubborn")
	_, _, ch, err := e.client.GetW(ctx, node)
	if err != nil {
		t.Fatalf("the lock node %s: %v", node, err)
	}
	_ = p.stdin.Close() // the shell exits, sleep and stubborn.sh are left
	select {
	case ev := <-ch:
		if ev.Type != zk.EventNodeDeleted {
			t.Fatalf("event %+v on the lock node, want its deletion", ev)
		}
		noneAlive(t, "the lock was released", sh, sleep, stub)
	case <-time.After(testkit.Deadline):
		t.Fatal("the lock node was never deleted")
	}
	if code := exited(t, p, sh, sleep, stub); code != 5 {
		t.Errorf("exit %d, want the command's 5", code)
	}
	if log, want := stubbornLog(t, dir), "TERM "+strconv.Itoa(p.cmd.Process.Pid)+"\n"; log != want {
		t.Errorf("stubborn.sh logged %q, want %q: SIGTERM once, adopted by gocurator", log, want)
	}
	s := p.stderr.String()
	if !strings.Contains(s, "sh exited and left processes in its group") || !strings.Contains(s, "sending SIGKILL") {
		t.Errorf("stderr %q", s)
	}
}

// SIGINT, SIGTERM, SIGHUP and SIGQUIT sent to gocurator reach the whole
// group, not only CMD: a grandchild that traps them hears each one, and
// gocurator exits only after it is gone.
func TestExecForwardsSignalsToTheGroup(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, tc := range []struct {
		sig  syscall.Signal
		name string // as sh's trap names it
	}{{syscall.SIGINT, "INT"}, {syscall.SIGTERM, "TERM"}, {syscall.SIGHUP, "HUP"}, {syscall.SIGQUIT, "QUIT"}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			set := "D='" + dir + "'\n"
			// The outer shell runs the inner one in its foreground (where
			// SIGINT is not ignored) and dies of the signal, leaving no
			// core file; the inner one traps it.
			outer := set + "ulimit -c 0\necho $$ > \"$D/outer.pid\"\nsh \"$D/inner.sh\"\nexit 9\n"
			inner := set + `for s in INT TERM HUP QUIT; do trap "echo $s >> '$D/inner.log'; exit 0" $s; done
echo $$ > "$D/inner.pid"
echo up
exec >/dev/null 2>&1
while :; do sleep 0.05; done
`
			for name, body := range map[string]string{"inner.sh": inner, "outer.sh": outer} {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			p := e.start("--zk", e.zk, "exec", "/locks/signals-"+tc.name, "--", "sh", filepath.Join(dir, "outer.sh"))
			p.line(t, "up", func(l string) bool { return l == "up" })
			out, in := readProc(t, dir, "outer"), readProc(t, dir, "inner")
			if err := p.cmd.Process.Signal(tc.sig); err != nil {
				t.Fatal(err)
			}
			if code := exited(t, p, out, in); code != 128+int(tc.sig) {
				t.Errorf("exit %d, want the shell's %d", code, 128+int(tc.sig))
			}
			noneAlive(t, "gocurator has exited", in)
			if b, _ := os.ReadFile(filepath.Join(dir, "inner.log")); string(b) != tc.name+"\n" {
				t.Errorf("the grandchild logged %q, want %s", b, tc.name)
			}
		})
	}
}

// Ctrl-Z (SIGTSTP to gocurator alone: CMD is not in the terminal's
// foreground group) stops the whole group, then gocurator; SIGCONT to
// gocurator resumes them all. A command that ran on while gocurator, and
// so its session, stood still would outlive the hold.
func TestExecCtrlZStopsTheGroup(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	dir := tree(t, "read line\nexit 0\n")
	p := e.start("--zk", e.zk, "exec", "--grace", "100ms", "/locks/ctrl-z", "--", "sh", filepath.Join(dir, "tree.sh"))
	p.line(t, "the lock node", func(string) bool { return true })
	ps := []proc{readProc(t, dir, "tree"), readProc(t, dir, "sleep"), readProc(t, dir, "stubborn")}
	self := proc{name: "gocurator", pid: p.cmd.Process.Pid}
	// A process cannot run when stopped (T), or when, as a shell that
	// vforks, it waits uninterruptibly (D) for a child stopped before its
	// exec.
	stopped := func(p proc) bool {
		state, _, ok := procStat(p.pid)
		return ok && (state == "T" || state == "D")
	}
	if err := p.cmd.Process.Signal(syscall.SIGTSTP); err != nil {
		t.Fatal(err)
	}
	for _, q := range append(ps, self) {
		testkit.Eventually(t, q.name+" is stopped", func() bool { return stopped(q) })
	}
	if err := p.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	for _, q := range append(ps, self) {
		testkit.Eventually(t, q.name+" runs again", func() bool { return !stopped(q) })
	}
	_ = p.stdin.Close()
	if code := exited(t, p, ps...); code != 0 {
		t.Errorf("exit %d, want the command's 0", code)
	}
	noneAlive(t, "gocurator has exited", ps...)
}

// exited waits, as p.wait, for gocurator to exit, but for testkit.Deadline
// at most: then it fails the test and SIGKILLs gocurator and the processes
// of its tree, which keep its stdout open.
func exited(t *testing.T, p *started, tree ...proc) int {
	t.Helper()
	done := make(chan int, 1)
	go func() { done <- p.wait(t) }()
	select {
	case code := <-done:
		return code
	case <-time.After(testkit.Deadline):
	}
	t.Errorf("gocurator still running %v after its command was to end", testkit.Deadline)
	for _, q := range tree {
		if q.alive() {
			_ = syscall.Kill(q.pid, syscall.SIGKILL)
		}
	}
	_ = p.cmd.Process.Kill()
	return <-done
}
