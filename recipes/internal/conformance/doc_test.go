// Package conformance_test checks what every lock handle of every recipe must
// do alike, against a real ZooKeeper: Close ends every hold and waiter with
// framework.ErrClosed, Release with a nil context changes nothing, a nil
// handle never panics, an acquire never outlives its deadline, and the
// first look at a hold after a process pause past its session's expiry
// reports it lost. The barriers, counters and values are held to the same
// rules where they apply (waiters_test.go): a nil ctx is refused, Close
// ends waiters with framework.ErrClosed, a wait's deadline is kept while
// disconnected.
package conformance_test

import (
	"os"
	"testing"

	"github.com/gocurator/curator/internal/testkit"
)

// zkAddr is the package's ZooKeeper server, started by TestMain.
var zkAddr string

// The pause tests (pause_test.go) run this binary again as the process
// that holds and is paused: holderAddrEnv set makes it that process, a
// client of the test's server at that address, in namespace holderNSEnv.
const (
	holderAddrEnv = "GOCURATOR_CONFORMANCE_HOLDER_ADDR"
	holderNSEnv   = "GOCURATOR_CONFORMANCE_HOLDER_NS"
)

func TestMain(m *testing.M) {
	if addr := os.Getenv(holderAddrEnv); addr != "" {
		// The holder uses the test's server, and its holds end under a
		// stopped process with its goroutines mid-flight: no server of
		// its own and no leak check (the test process has both).
		zkAddr = addr
		os.Exit(m.Run())
	}
	testkit.Main(m, &zkAddr)
}
