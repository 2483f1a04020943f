package shared_test

import (
	"context"
	"testing"
	"time"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testkit"
)

// deadline bounds every wait in these tests.
const deadline = 30 * time.Second

// unique returns a name unique to the test, for namespaces and paths.
func unique(t testing.TB) string { return testkit.Unique(t) }

// connect returns a client of addr, closed at cleanup; ns "" for none.
func connect(t testing.TB, addr, ns string, opts ...framework.Option) *framework.Client {
	t.Helper()
	return testkit.Connect(t, addr, ns, opts...)
}

func ctxT(t testing.TB) context.Context { return testkit.Ctx(t) }

func waitClosed(t testing.TB, ch <-chan struct{}, what string) {
	t.Helper()
	testkit.WaitClosed(t, ch, what)
}
