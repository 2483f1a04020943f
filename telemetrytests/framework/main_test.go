package framework_test

import (
	"context"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gocurator/curator/connstate"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testkit"
)

// zkAddr is the package's ZooKeeper server, started by TestMain for every
// test; each test works in a namespace of its own (testkit.Unique).
var zkAddr string

func TestMain(m *testing.M) { testkit.Main(m, &zkAddr) }

// connect connects to addr and closes the client at the end of the test,
// failing it if Close does.
func connect(t testing.TB, addr string, opts ...framework.Option) *framework.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testkit.Deadline)
	defer cancel()
	c, err := framework.Connect(ctx, addr, opts...)
	if err != nil {
		t.Fatalf("Connect(%q): %v", addr, err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return c
}

// recorder collects the states a client reports, in order.
type recorder struct {
	ch     chan connstate.State
	cancel func()
}

func record(c *framework.Client) *recorder {
	r := &recorder{ch: make(chan connstate.State, 64)}
	r.cancel = c.Listen(func(s connstate.State) { r.ch <- s })
	return r
}

// expect fails unless the next states reported are want, in this order,
// each within d.
func (r *recorder) expect(t testing.TB, d time.Duration, want ...connstate.State) {
	t.Helper()
	for i, w := range want {
		timer := time.NewTimer(d)
		select {
		case s := <-r.ch:
			timer.Stop()
			if s != w {
				t.Fatalf("state %d: got %v, want %v (want sequence %v)", i, s, w, want)
			}
		case <-timer.C:
			t.Fatalf("state %d: no state within %v, want %v (want sequence %v)", i, d, w, want)
		}
	}
}

// backticked is a value in a cell of the observability guide's tables.
var backticked = regexp.MustCompile("`([^`]+)`")

// docValues returns the values docs/observability.md's attribute table
// gives for the attribute attr (curator.operation, curator.state), in
// order. The framework's own tests (TestTelemetryNamesAreDocumented) check
// that these are exactly the values the client records, so a test here
// that goes through them covers every operation and state.
func docValues(t testing.TB, attr string) []string {
	t.Helper()
	doc, err := os.ReadFile("../../docs/observability.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(doc), "\n") {
		if !strings.HasPrefix(line, "| `"+attr+"` |") {
			continue
		}
		cells := strings.Split(line, "|")
		if len(cells) < 4 {
			t.Fatalf("docs/observability.md: the row of %s has no values cell: %q", attr, line)
		}
		var vals []string
		for _, m := range backticked.FindAllStringSubmatch(cells[3], -1) {
			vals = append(vals, m[1])
		}
		if len(vals) == 0 {
			t.Fatalf("docs/observability.md: the row of %s names no values: %q", attr, line)
		}
		return vals
	}
	t.Fatalf("docs/observability.md: no row for the attribute %s", attr)
	return nil
}
