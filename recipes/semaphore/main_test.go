package semaphore_test

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/gocurator/curator/zktest"
)

// zkAddr is the address of the package's ZooKeeper server, zkServer the
// server, started by TestMain for every test, benchmark and example.
var (
	zkAddr   string
	zkServer *zktest.Server
)

// withServer runs the tests with one real ZooKeeper for the package,
// stopped before goleak looks for leftover goroutines.
type withServer struct{ m *testing.M }

func (w withServer) Run() int {
	srv, err := zktest.Launch()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer srv.Close()
	zkServer, zkAddr = srv, srv.ConnectString()
	return w.m.Run()
}

func TestMain(m *testing.M) { goleak.VerifyTestMain(withServer{m}) }
