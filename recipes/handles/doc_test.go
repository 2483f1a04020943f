// Package handles_test checks what every lock handle of every recipe must
// do alike, against a real ZooKeeper: Close ends every hold and waiter with
// framework.ErrClosed, Release with a nil context changes nothing, a nil
// handle never panics, and an acquire never outlives its deadline.
package handles_test

import (
	"fmt"
	"os"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/gocurator/curator/zktest"
)

var (
	srvOnce sync.Once
	srv     *zktest.Server
	srvErr  error
)

type packageMain struct{ m *testing.M }

func (p packageMain) Run() int {
	code := p.m.Run()
	if srv != nil {
		if err := srv.Close(); err != nil {
			fmt.Fprintln(os.Stderr, "closing the shared server:", err)
			if code == 0 {
				code = 1
			}
		}
	}
	return code
}

func TestMain(m *testing.M) { goleak.VerifyTestMain(packageMain{m}) }

// server returns the package's shared ZooKeeper server.
func server(t testing.TB) *zktest.Server {
	t.Helper()
	srvOnce.Do(func() { srv, srvErr = zktest.Launch() })
	if srvErr != nil {
		t.Fatalf("starting ZooKeeper: %v", srvErr)
	}
	return srv
}
