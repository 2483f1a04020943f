package zktest_test

import (
	"bytes"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/gocurator/curator/zktest"
)

// lockedBuffer is an io.Writer safe to write from the server's output
// goroutine while the test reads it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// WithLogOutput: the writer gets the server's output, the same bytes as
// its log file.
func TestWithLogOutput(t *testing.T) {
	t.Parallel()
	var out lockedBuffer
	srv, err := zktest.Launch(zktest.WithBaseDir(t.TempDir()), zktest.WithLogOutput(&out))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	logged, err := srv.Log()
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	// Close waits for the process and so for its output: the writer has
	// everything the server wrote to the log file before (and maybe lines
	// written since), without the marker zktest writes there at each start.
	got := out.String()
	marker, logged, _ := strings.Cut(logged, "\n")
	if !strings.HasPrefix(marker, "---- zktest: starting server") {
		t.Fatalf("the log file starts with %q, not zktest's start marker", marker)
	}
	if logged == "" || !strings.HasPrefix(got, logged) {
		t.Fatalf("the writer got %d bytes that do not start with the log file's %d bytes\nwriter:\n%s\nlog file:\n%s",
			len(got), len(logged), got, logged)
	}
	_, port, err := net.SplitHostPort(srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, port) {
		t.Errorf("the server's output never names its client port %s:\n%s", port, got)
	}
}

// WithKeepFiles: Close stops the server but leaves its directory (the
// configuration, the log and the data) for inspection.
func TestWithKeepFiles(t *testing.T) {
	t.Parallel()
	base := t.TempDir() // removes the kept directory at the end
	srv, err := zktest.Launch(zktest.WithBaseDir(base), zktest.WithKeepFiles())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	c, _ := connect(t, []string{srv.Addr()})
	if _, err := c.Create("/kept", []byte("v"), 0, openACL); err != nil {
		t.Fatal(err)
	}
	c.Close()
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	dir := srv.Dir()
	if filepath.Dir(dir) != base {
		t.Fatalf("Dir() = %s, want a directory in %s", dir, base)
	}
	for _, name := range []string{"zoo.cfg", "server.log"} {
		if fi, err := os.Stat(filepath.Join(dir, name)); err != nil || fi.Size() == 0 {
			t.Errorf("%s after Close: %v (empty: %v)", name, err, err == nil && fi.Size() == 0)
		}
	}
	// The create went into a transaction log in the data directory.
	logs, err := filepath.Glob(filepath.Join(dir, "data", "version-2", "log.*"))
	if err != nil || len(logs) == 0 {
		t.Errorf("no transaction log kept in %s: %v", filepath.Join(dir, "data", "version-2"), err)
	}
	if _, err := os.Stat(filepath.Join(dir, "owner.pid")); !os.IsNotExist(err) {
		t.Errorf("a kept directory has an owner file (the next Launch's sweep would remove it): %v", err)
	}
}

// Target is the address given to NewProxy or ListenProxy, the proxy's own
// address another one.
func TestProxyTarget(t *testing.T) {
	t.Parallel()
	const target = "127.0.0.1:1" // never dialled: nothing connects to the proxies
	p := zktest.NewProxy(t, target)
	if p.Target() != target {
		t.Errorf("NewProxy(%q).Target() = %q", target, p.Target())
	}
	if p.Addr() == target {
		t.Errorf("Addr() = Target() = %q", target)
	}
	lp, err := zktest.ListenProxy(target)
	if err != nil {
		t.Fatal(err)
	}
	defer lp.Close()
	if lp.Target() != target {
		t.Errorf("ListenProxy(%q).Target() = %q", target, lp.Target())
	}
}
