package mutex_test

import (
	"context"
	"testing"
	"time"

	"github.com/gocurator/curator/connstate"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/zktest"
)

// deadline bounds every wait in these tests.
const deadline = 30 * time.Second

// namespace returns a namespace unique to the test.
func namespace(t testing.TB) string { return testkit.Unique(t) }

// connect returns a client of addr in namespace ns, closed at cleanup.
func connect(t testing.TB, addr, ns string, opts ...framework.Option) *framework.Client {
	t.Helper()
	return testkit.Connect(t, addr, ns, opts...)
}

func ctxT(t testing.TB) context.Context { return testkit.Ctx(t) }

func children(t testing.TB, c *framework.Client, path string) []string {
	t.Helper()
	return testkit.Children(t, c, path)
}

func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	testkit.Eventually(t, what, cond)
}

func waitState(t testing.TB, c *framework.Client, s connstate.State) {
	t.Helper()
	testkit.WaitState(t, c, s)
}

func waitClosed(t testing.TB, ch <-chan struct{}, what string) {
	t.Helper()
	testkit.WaitClosed(t, ch, what)
}

// server starts a ZooKeeper for one test.
func server(t testing.TB) *zktest.Server { return zktest.StartServer(t) }
