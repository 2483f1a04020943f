package curator_test

// Black-box tests of what README.md tells a newcomer to run (issue 36,
// items 1 and 2): its install commands, run as written in a clean clone of
// this repository, and the table of what each make target installs,
// against `make -n`. They need git and make; they need no network (the
// go commands run with GOPROXY=off, on the module cache that building this
// repository filled) and leave the caller's GOFLAGS alone.

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// readme returns README.md's text.
func readme(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// shellBlocks returns the ```sh blocks of the section of md that starts
// with heading, each as its lines.
func shellBlocks(md, heading string) [][]string {
	i := strings.Index(md, "\n"+heading+"\n")
	if i < 0 {
		return nil
	}
	section := md[i+len(heading)+2:]
	if j := strings.Index(section, "\n## "); j >= 0 {
		section = section[:j]
	}
	var blocks [][]string
	for _, m := range regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(section, -1) {
		blocks = append(blocks, strings.Split(strings.TrimSpace(m[1]), "\n"))
	}
	return blocks
}

// offlineEnv is the environment the README's commands run in: the
// caller's, with the module proxy off (the test needs no network) and no
// workspace or toolchain switch inherited from it. GOFLAGS is left alone:
// the commands must work with whatever the user has.
func offlineEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "GOPROXY", "GOWORK", "GOTOOLCHAIN", "GOBIN", "PWD":
			continue
		}
		env = append(env, kv)
	}
	return append(env, append([]string{"GOPROXY=off", "GOTOOLCHAIN=local"}, extra...)...)
}

// run runs a shell command line in dir and fails the test if it fails.
func run(t *testing.T, dir string, env []string, line string) string {
	t.Helper()
	cmd := exec.Command("bash", "-euo", "pipefail", "-c", line)
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("in %s: %s: %v\n%s", dir, line, err, out)
	}
	return string(out)
}

// cloneRepo clones this repository's HEAD into dir/curator, as a user
// would clone it from GitHub, and returns the clone's path.
func cloneRepo(t *testing.T, dir string) string {
	t.Helper()
	top, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Fatalf("not in a git checkout (%v): nothing to clone", err)
	}
	clone := filepath.Join(dir, "curator")
	run(t, dir, offlineEnv(), "git clone -q "+strings.TrimSpace(string(top))+" "+clone)
	return clone
}

// TestReadmeInstallInCleanClone runs the README's install commands as
// written: the clone (from this repository instead of GitHub), go install
// of the CLI, and a module of one's own next to the clone that imports a
// recipe through the replace and go mod tidy. Before issue 36 the README
// offered only the release commands, which fail until the module is
// published.
func TestReadmeInstallInCleanClone(t *testing.T) {
	md := readme(t)
	blocks := shellBlocks(md, "## Install")
	if len(blocks) < 3 {
		t.Fatalf("README's Install section has %d sh blocks, want 3 (the CLI from a clone, the library, the release commands)", len(blocks))
	}
	// The first screen: the clone comes before anything else to read.
	if i := strings.Index(md, blocks[0][0]); i < 0 || strings.Count(md[:i], "\n") > 30 {
		t.Errorf("the install commands are not on the README's first screen (line %d)", strings.Count(md[:max(i, 0)], "\n")+1)
	}

	dir := t.TempDir()
	gobin := filepath.Join(dir, "bin")
	env := offlineEnv("GOBIN=" + gobin)

	// The CLI from a clone. The clone line is the README's, from GitHub:
	// replace the URL with this repository and run the rest as written.
	cli := blocks[0]
	if !strings.HasPrefix(cli[0], "git clone https://github.com/gocurator/curator && cd curator") {
		t.Fatalf("the README's first install line is %q, want the clone", cli[0])
	}
	clone := cloneRepo(t, dir)
	for _, line := range cli[1:] {
		run(t, clone, env, line)
	}
	if out := run(t, dir, env, filepath.Join(gobin, "gocurator")+" version"); !strings.HasPrefix(out, "gocurator ") {
		t.Errorf("gocurator version printed %q", out)
	}

	// The library, in a module of one's own next to the clone.
	app := filepath.Join(dir, "app")
	if err := os.MkdirAll(app, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(app, "go.mod"), "module example.com/app\n\ngo 1.23.0\n")
	writeFile(t, filepath.Join(app, "main.go"), appMain)
	for _, line := range blocks[1] {
		run(t, app, env, line)
	}
	run(t, app, env, "go build -o app . && go vet .")

	// The release commands are labelled as such, and do fail today (if
	// they start to work, the module is published: rewrite the section).
	release := blocks[2]
	if !slices.Contains(release, "go install github.com/gocurator/curator/cmd/gocurator@latest") ||
		!slices.Contains(release, "go get github.com/gocurator/curator") {
		t.Errorf("the third install block is %q, want the release commands", release)
	}
	before := strings.TrimSpace(strings.TrimSuffix(md[:strings.Index(md, release[0])], "```sh\n"))
	if label := before[strings.LastIndex(before, "\n\n"):]; !strings.Contains(label, "once it is published") {
		t.Errorf("the release commands are introduced by %q, which does not say they wait for the release", label)
	}
}

// TestReadmeNamesTheOutsideWorkspaceHint pins what a user who builds cmd/
// outside the workspace sees: the go command's hint to run go mod
// download, which cannot work before the release. The README quotes it and
// says what to do instead, so that searching for it finds the answer.
func TestReadmeNamesTheOutsideWorkspaceHint(t *testing.T) {
	clone := cloneRepo(t, t.TempDir())
	cmd := exec.Command("go", "build", "-o", os.DevNull, "./gocurator")
	cmd.Dir, cmd.Env = filepath.Join(clone, "cmd"), offlineEnv("GOWORK=off")
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatal("cmd/ builds outside the workspace now: the README's paragraph about GOWORK=off should go, and this test with it")
	}
	const hint = "go mod download github.com/gocurator/curator"
	if !strings.Contains(string(out), hint) {
		t.Fatalf("the go command no longer says %q outside the workspace but:\n%s\nupdate the README's Install section", hint, out)
	}
	md := strings.Join(strings.Fields(readme(t)), " ") // the hint may be wrapped
	para := md[max(strings.Index(md, "GOWORK=off"), 0):]
	if !strings.Contains(md, "GOWORK=off") || !strings.Contains(para, hint) || !strings.Contains(para, "do not") {
		t.Errorf("README does not quote %q next to GOWORK=off with what to do instead", hint)
	}
}

// TestReadmeListsWhatMakeInstalls compares the README's table of what each
// make target installs with what `make -n` would run (issue 36, item 2:
// make demo installed Prometheus, which only the observability test needs,
// and the README did not say).
func TestReadmeListsWhatMakeInstalls(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Fatalf("make is needed to compare the README's table with make -n: %v", err)
	}
	rows := regexp.MustCompile("(?m)^\\| (`make [^|]*) \\| ([^|]*) \\|$").FindAllStringSubmatch(readme(t), -1)
	if len(rows) == 0 {
		t.Fatal("README has no table of what the make targets install")
	}
	listed := map[string][]string{}
	var order []string
	for _, r := range rows {
		var pkgs []string
		for _, p := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(r[2], -1) {
			if !strings.Contains(p[1], " ") {
				pkgs = append(pkgs, p[1])
			}
		}
		for _, tg := range regexp.MustCompile("`make ([a-z-]+)`").FindAllStringSubmatch(r[1], -1) {
			if strings.HasPrefix(r[2], "as `make ") {
				pkgs = listed[regexp.MustCompile("`make ([a-z-]+)`").FindStringSubmatch(r[2])[1]]
			}
			listed[tg[1]] = pkgs
			order = append(order, tg[1])
		}
	}
	for _, target := range []string{"demo", "test"} {
		if _, ok := listed[target]; !ok {
			t.Errorf("README's table does not list make %s", target)
		}
	}
	for _, target := range order {
		cmd := exec.Command("make", "-n", target)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			t.Fatalf("make -n %s: %v\n%s", target, err, out.String())
		}
		got := installs(out.String())
		want := slices.Clone(listed[target])
		sort.Strings(want)
		if !slices.Equal(got, want) {
			t.Errorf("make %s installs %q when missing, README lists %q", target, got, want)
		}
	}
}

// installs maps the commands of a make recipe to the packages they install
// when missing.
func installs(recipe string) []string {
	var pkgs []string
	for _, line := range strings.Split(recipe, "\n") {
		if strings.Contains(line, "scripts/ensure-zookeeper.sh") {
			pkgs = append(pkgs, "zookeeper")
			if strings.Contains(line, "--with-curator") {
				pkgs = append(pkgs, "libcurator-recipes-java", "libcurator-discovery-java")
			}
		}
		if strings.Contains(line, "scripts/ensure-prometheus.sh") {
			pkgs = append(pkgs, "prometheus")
		}
		if strings.Contains(line, "scripts/ensure-chromium.sh") {
			pkgs = append(pkgs, "chromium")
		}
		// A script this table does not know installs something the
		// README does not list: name it, so that the comparison fails.
		if m := regexp.MustCompile(`scripts/(ensure-[a-z]+)\.sh`).FindStringSubmatch(line); m != nil &&
			!slices.Contains([]string{"ensure-zookeeper", "ensure-prometheus", "ensure-chromium"}, m[1]) {
			pkgs = append(pkgs, "unknown script "+m[1])
		}
		if strings.Contains(line, "go install honnef.co/go/tools/cmd/staticcheck@") {
			pkgs = append(pkgs, "staticcheck")
		}
	}
	sort.Strings(pkgs)
	return slices.Compact(pkgs)
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// appMain is a user's program: it takes a recipes/mutex lock.
const appMain = `package main

import (
	"context"
	"log"
	"time"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/mutex"
)

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := framework.Connect(ctx, "127.0.0.1:2181")
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	m := mutex.New(c, "/locks/orders")
	if err := m.Acquire(ctx); err != nil {
		log.Fatal(err)
	}
	defer m.Release(context.Background())
	log.Print("holding /locks/orders")
}
`
