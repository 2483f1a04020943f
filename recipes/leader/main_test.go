package leader_test

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/gocurator/curator/zktest"
)

// zkAddr is the package's ZooKeeper server, started by TestMain for every
// test and example.
var zkAddr string

// TestMain starts the package's ZooKeeper server for every test, and
// puts its address in $GOCURATOR_ZK, where the examples read it as a
// program would.
func TestMain(m *testing.M) { goleak.VerifyTestMain(withServer{m}) }

type withServer struct{ m *testing.M }

func (w withServer) Run() int {
	srv, err := zktest.Launch()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer srv.Close()
	zkAddr = srv.ConnectString()
	if err := os.Setenv("GOCURATOR_ZK", zkAddr); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return w.m.Run()
}
