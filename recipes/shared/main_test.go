package shared_test

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/gocurator/curator/zktest"
)

// zkAddr is the address of the package's ZooKeeper server, started by
// TestMain for every test and example of the package.
var zkAddr string

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
	zkAddr = srv.ConnectString()
	return w.m.Run()
}

func TestMain(m *testing.M) { goleak.VerifyTestMain(withServer{m}) }
