package main

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/leader"
)

// elect exec runs the command only while the process leads: a second
// campaigner waits until the first's command exits, then runs its own with
// a larger token; each side's id is the election's leader while it runs,
// and nothing is left behind. Each command holds a marker file from its
// start to its end and fails if it finds another's: an overlap of the two
// commands cannot go unseen, however the output is read.
func TestElectExec(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := testkit.Ctx(t)
	const path = "/elections/scheduler"
	marker := filepath.Join(t.TempDir(), "running")
	script := `if [ -e '` + marker + `' ]; then echo overlap; exit 9; fi; : > '` + marker + `'; ` +
		`echo "$GOCURATOR_FENCING_TOKEN"; read x; rm '` + marker + `'; exit 3`
	first := e.start("--zk", e.zk, "elect", "exec", "--id", "first", path, "--", "sh", "-c", script)
	t1, err := strconv.ParseInt(first.line(t, "the first token", func(string) bool { return true }), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	el := leader.New(e.client, path)
	if p, err := el.Leader(ctx); err != nil || p.ID != "first" {
		t.Fatalf("leader while the first command runs: %+v, %v", p, err)
	}
	second := e.start("--zk", e.zk, "elect", "exec", "--id", "second", path, "--", "sh", "-c", script)
	e.waitChildren(path, 2) // the second campaigns, and waits
	if p, err := el.Leader(ctx); err != nil || p.ID != "first" {
		t.Fatalf("leader while the second campaigns: %+v, %v", p, err)
	}
	_ = first.stdin.Close()
	if code := first.wait(t); code != 3 {
		t.Fatalf("first: exit %d, want the command's 3 (stderr %q)", code, first.stderr.String())
	}
	line := second.line(t, "the second token", func(string) bool { return true })
	t2, err := strconv.ParseInt(strings.TrimSpace(line), 10, 64)
	if err != nil {
		t.Fatalf("second printed %q (%v), want its token: the commands overlapped?", line, err)
	}
	if t2 <= t1 {
		t.Fatalf("second term's token %d, first's %d", t2, t1)
	}
	if p, err := el.Leader(ctx); err != nil || p.ID != "second" {
		t.Fatalf("leader while the second command runs: %+v, %v", p, err)
	}
	_ = second.stdin.Close()
	if code := second.wait(t); code != 3 {
		t.Fatalf("second: exit %d (stderr %q)", code, second.stderr.String())
	}
	e.waitChildren(path, 0)
}

// elect exec with bad input: one line, non-zero exit.
func TestElectExecBadInput(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, args := range [][]string{
		{"elect", "exec", "relative/path", "--", "true"},
		{"elect", "exec", "/elections/x", "true"},
		{"elect", "exec", "/elections/x", "--", "no-such-command-gocurator"},
	} {
		r := e.run(args...)
		if r.code == 0 || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 || r.stderr == "" {
			t.Errorf("%v: exit %d, stderr %q: want one line and a non-zero exit", args, r.code, r.stderr)
		}
	}
}
