package curator_test

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// TestGettingStartedFootprint builds the two programs of docs/
// getting-started.md's "What your module inherits" as a user would (a
// module of its own each, go mod tidy, offline) and checks the page's
// figures against them: the modules in the graph and compiled in, the
// list of compiled modules and its table, the modules only listed, and
// the binary sizes when the Go version and platform are the ones the
// table names. The table had gone stale (28 modules, 14 only listed)
// once the OpenTelemetry SDK left the library's go.mod (issue 36, item 4).
func TestGettingStartedFootprint(t *testing.T) {
	b, err := os.ReadFile("docs/getting-started.md")
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	lib, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	env := offlineEnv()

	mutexDir := filepath.Join(dir, "svc")
	mustMkdir(t, mutexDir)
	writeFile(t, filepath.Join(mutexDir, "main.go"), appMain)
	writeFile(t, filepath.Join(mutexDir, "go.mod"), "module example.com/svc\n\ngo 1.23.0\n")
	run(t, mutexDir, env, "go mod edit -replace github.com/gocurator/curator="+lib+" && go mod tidy")
	mutexFig := measure(t, mutexDir, env)

	zkDir := filepath.Join(dir, "zklock")
	mustMkdir(t, zkDir)
	writeFile(t, filepath.Join(zkDir, "main.go"), zkLockMain)
	writeFile(t, filepath.Join(zkDir, "go.mod"), "module example.com/zklock\n\ngo 1.23.0\n\nrequire github.com/go-zookeeper/zk v1.0.4\n")
	run(t, zkDir, env, "go mod tidy")
	zkFig := measure(t, zkDir, env)

	// The modules compiled in besides the program and the library, and the
	// table that says why each one is there.
	var deps []string
	for _, m := range mutexFig.compiled {
		if m != "example.com/svc" && m != "github.com/gocurator/curator" {
			deps = append(deps, m)
		}
	}
	if want := fmt.Sprintf("compiles %d modules besides it", len(deps)); !strings.Contains(oneLine(page), want) {
		t.Errorf("getting-started does not say %q", want)
	}
	tabled := tableModules(page)
	if !slices.Equal(tabled, deps) {
		t.Errorf("getting-started's table of modules lists\n  %q\nthe program compiles\n  %q", tabled, deps)
	}
	others := mutexFig.graph - 2
	listed := others - len(deps)
	if want := fmt.Sprintf("Of the %d other modules in the graph, the %d of the table above are compiled into your binary; the other %d are only listed", others, len(deps), listed); !strings.Contains(oneLine(page), want) {
		t.Errorf("getting-started does not say %q", want)
	}

	// The footprint table.
	head := regexp.MustCompile(`\| Program \| Modules in the graph \| Modules compiled in \| Binary \((Go [0-9.]+), (\w+/\w+)\) \|`).FindStringSubmatch(page)
	if head == nil {
		t.Fatal("getting-started has no footprint table")
	}
	sameBuild := "Go "+strings.TrimPrefix(runtime.Version(), "go") == head[1] && runtime.GOOS+"/"+runtime.GOARCH == head[2]
	for _, p := range []struct {
		name string
		fig  figures
	}{{"`recipes/mutex`", mutexFig}, {"`zk.Lock`", zkFig}} {
		row := regexp.MustCompile(`(?m)^\| ` + regexp.QuoteMeta(p.name) + ` \| (\d+) \| (\d+) \| ([0-9.]+) MB \|$`).FindStringSubmatch(page)
		if row == nil {
			t.Errorf("the footprint table has no row for %s", p.name)
			continue
		}
		if n, _ := strconv.Atoi(row[1]); n != p.fig.graph {
			t.Errorf("%s: the table says %d modules in the graph, go list -m all lists %d", p.name, n, p.fig.graph)
		}
		if n, _ := strconv.Atoi(row[2]); n != len(p.fig.compiled) {
			t.Errorf("%s: the table says %d modules compiled in, go list -deps finds %d", p.name, n, len(p.fig.compiled))
		}
		mb, _ := strconv.ParseFloat(row[3], 64)
		got := float64(p.fig.size) / 1e6
		switch {
		case !sameBuild:
			t.Logf("%s: binary %.1f MB with %s %s/%s; the table's %.1f MB is for %s %s", p.name, got, runtime.Version(), runtime.GOOS, runtime.GOARCH, mb, head[1], head[2])
		case math.Abs(got-mb) > 0.05*mb:
			// Within 5%: the library's own code grows a little with
			// every change; a stale table (a dependency in or out) is
			// off by more.
			t.Errorf("%s: the table says %.1f MB, the binary is %.1f MB (more than 5%% apart)", p.name, mb, got)
		}
	}
}

// figures are what a program inherits.
type figures struct {
	graph    int      // modules in go list -m all, its own included
	compiled []string // modules of the packages built into it, sorted
	size     int64    // bytes of the binary
}

func measure(t *testing.T, dir string, env []string) figures {
	t.Helper()
	var f figures
	f.graph = len(strings.Fields(run(t, dir, env, "go list -m -f '{{.Path}}' all")))
	for _, m := range strings.Fields(run(t, dir, env, "go list -deps -f '{{with .Module}}{{.Path}}{{end}}' .")) {
		if !slices.Contains(f.compiled, m) {
			f.compiled = append(f.compiled, m)
		}
	}
	sort.Strings(f.compiled)
	run(t, dir, env, "go build -o app .")
	st, err := os.Stat(filepath.Join(dir, "app"))
	if err != nil {
		t.Fatal(err)
	}
	f.size = st.Size()
	return f
}

// tableModules returns the modules of getting-started's "Module | Why"
// table, sorted, with otel/... written in full.
func tableModules(page string) []string {
	i := strings.Index(page, "| Module | Why |")
	if i < 0 {
		return nil
	}
	var mods []string
	for _, line := range strings.Split(page[i:], "\n")[2:] {
		if !strings.HasPrefix(line, "| ") {
			break
		}
		cell := strings.Split(line, " | ")[0]
		for _, m := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(cell, -1) {
			name := m[1]
			if strings.HasPrefix(name, "otel/") {
				name = "go.opentelemetry.io/" + name
			}
			mods = append(mods, name)
		}
	}
	sort.Strings(mods)
	return mods
}

// oneLine joins a Markdown text's lines, so that a phrase is found however
// it is wrapped.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func mustMkdir(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}

// zkLockMain is the same program on go-zookeeper's zk.Lock.
const zkLockMain = `package main

import (
	"log"
	"time"

	"github.com/go-zookeeper/zk"
)

func main() {
	conn, _, err := zk.Connect([]string{"127.0.0.1:2181"}, 10*time.Second)
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()
	l := zk.NewLock(conn, "/locks/orders", zk.WorldACL(zk.PermAll))
	if err := l.Lock(); err != nil {
		log.Fatal(err)
	}
	defer l.Unlock()
	log.Print("holding /locks/orders")
}
`
