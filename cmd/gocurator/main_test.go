package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/gocurator/curator/cmd/internal/inspect"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/zktest"
)

// The shared server and the gocurator binary, built once for the package.
var (
	addr string
	bin  string
)

// TestMain builds the command (with -race when the tests have it) and
// starts one ZooKeeper server; every test works in a chroot of its own.
func TestMain(m *testing.M) { goleak.VerifyTestMain(setup{m}) }

type setup struct{ m *testing.M }

func (s setup) Run() int {
	dir, err := os.MkdirTemp("", "gocurator-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	bin = filepath.Join(dir, "gocurator")
	args := []string{"build", "-o", bin}
	if raceEnabled {
		args = append(args, "-race")
	}
	build := exec.Command("go", append(args, ".")...)
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build: %v\n%s", err, out)
		return 1
	}
	srv, err := zktest.Launch()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer srv.Close()
	addr = srv.ConnectString()
	return s.m.Run()
}

// env is one test's chroot: the connect string for gocurator and a client
// of the same tree for our recipes.
type env struct {
	t      *testing.T
	ns     string
	zk     string // addr/ns, for gocurator and Curator
	client *framework.Client
}

func newEnv(t *testing.T) *env {
	t.Helper()
	ns := testkit.Unique(t)
	root := testkit.Connect(t, addr, "")
	if _, err := root.Create(testkit.Ctx(t), "/"+ns, nil); err != nil {
		t.Fatalf("create chroot: %v", err)
	}
	return &env{t: t, ns: ns, zk: addr + "/" + ns, client: testkit.Connect(t, addr, ns)}
}

// connect returns another client (another session) in the chroot.
func (e *env) connect(opts ...framework.Option) *framework.Client {
	return testkit.Connect(e.t, addr, e.ns, opts...)
}

// result is one run of gocurator.
type result struct {
	stdout, stderr string
	code           int
}

// run runs gocurator with --zk e.zk and args, stdin empty.
func (e *env) run(args ...string) result {
	e.t.Helper()
	return e.runIn("", append([]string{"--zk", e.zk}, args...)...)
}

// runIn runs gocurator with args as given and stdin.
func (e *env) runIn(stdin string, args ...string) result {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testkit.Deadline)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = cleanEnv()
	var out, errb bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = strings.NewReader(stdin), &out, &errb
	err := cmd.Run()
	code := 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			e.t.Fatalf("gocurator %v: %v", args, err)
		}
		code = ee.ExitCode()
	}
	return result{out.String(), errb.String(), code}
}

// cleanEnv is the environment without gocurator's own variables.
func cleanEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GOCURATOR_") {
			out = append(out, kv)
		}
	}
	return out
}

// ok fails the test unless r succeeded with nothing on stderr.
func (r result) ok(t *testing.T) result {
	t.Helper()
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("exit %d, stderr %q, stdout:\n%s", r.code, r.stderr, r.stdout)
	}
	return r
}

// lsJSON runs locks ls --json and decodes it.
func (e *env) lsJSON(args ...string) []inspect.Lock {
	e.t.Helper()
	r := e.run(append([]string{"--json", "locks", "ls"}, args...)...).ok(e.t)
	var doc struct {
		Locks    []inspect.Lock `json:"locks"`
		Sessions string         `json:"sessions"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		e.t.Fatalf("bad JSON %v:\n%s", err, r.stdout)
	}
	if doc.Sessions != "complete" {
		e.t.Fatalf("sessions = %q, want complete (the test server allows cons)", doc.Sessions)
	}
	return doc.Locks
}

// only returns the one element of xs, failing the test unless there is
// exactly one (rather than panic on an index).
func only[T any](t *testing.T, xs []T, what string) T {
	t.Helper()
	if len(xs) != 1 {
		t.Fatalf("%d %s, want one: %+v", len(xs), what, xs)
	}
	return xs[0]
}

// waitChildren waits until path has n children.
func (e *env) waitChildren(path string, n int) {
	e.t.Helper()
	testkit.Eventually(e.t, fmt.Sprintf("%s has %d children", path, n), func() bool {
		return len(testkit.Children(e.t, e.client, path)) == n
	})
}

// hex is a session id as gocurator prints it.
func hex(id int64) string { return inspect.SessionHex(id) }

// started is a gocurator process still running, its stdout read by line.
type started struct {
	cmd    *exec.Cmd
	lines  chan string
	stdin  io.WriteCloser
	stderr *bytes.Buffer
	once   sync.Once
}

// start runs gocurator with args in the background; it is killed at
// cleanup if still running.
func (e *env) start(args ...string) *started {
	e.t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = cleanEnv()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		e.t.Fatal(err)
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		e.t.Fatal(err)
	}
	s := &started{cmd: cmd, lines: make(chan string, 1024), stdin: stdin, stderr: &bytes.Buffer{}}
	cmd.Stderr = s.stderr
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	go func() {
		defer close(s.lines)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			s.lines <- sc.Text()
		}
	}()
	e.t.Cleanup(func() {
		_ = cmd.Process.Kill()
		s.wait(e.t)
	})
	return s
}

// line returns the next line of output that satisfies match.
func (s *started) line(t *testing.T, what string, match func(string) bool) string {
	t.Helper()
	timer := time.NewTimer(testkit.Deadline)
	defer timer.Stop()
	for {
		select {
		case l, ok := <-s.lines:
			if !ok {
				t.Fatalf("output ended before %s (stderr %q)", what, s.stderr.String())
			}
			if match(l) {
				return l
			}
		case <-timer.C:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// wait waits for the process to end and returns its exit status.
func (s *started) wait(t *testing.T) int {
	t.Helper()
	s.once.Do(func() {
		for range s.lines {
		}
		_ = s.cmd.Wait() // the status is read below
	})
	return s.cmd.ProcessState.Sys().(syscall.WaitStatus).ExitStatus()
}
