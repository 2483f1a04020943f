package leader_test

import (
	"os"
	"testing"

	"github.com/gocurator/curator/internal/testkit"
)

// zkAddr is the package's ZooKeeper server, started by TestMain for every
// test and example (which read it from $GOCURATOR_ZK, as a program would);
// each test works in a namespace of its own (testkit.Unique).
var zkAddr string

// The pause test (pause_test.go) runs this binary again as the leader
// process it stops: pausedAddrEnv set makes it that process, a client of
// the test's server at that address, in namespace pausedNSEnv.
const (
	pausedAddrEnv = "GOCURATOR_LEADER_PAUSED_ADDR"
	pausedNSEnv   = "GOCURATOR_LEADER_PAUSED_NS"
)

func TestMain(m *testing.M) {
	if addr := os.Getenv(pausedAddrEnv); addr != "" {
		// The paused leader uses the test's server, and its terms end
		// under a stopped process with goroutines mid-flight: no server
		// of its own and no leak check (the test process has both).
		zkAddr = addr
		os.Exit(m.Run())
	}
	testkit.Main(m, &zkAddr)
}
