// Package handles_test checks what every lock handle of every recipe must
// do alike, against a real ZooKeeper: Close ends every hold and waiter with
// framework.ErrClosed, Release with a nil context changes nothing, a nil
// handle never panics, and an acquire never outlives its deadline.
package handles_test

import (
	"testing"

	"github.com/gocurator/curator/internal/testkit"
)

// zkAddr is the package's ZooKeeper server, started by TestMain.
var zkAddr string

func TestMain(m *testing.M) { testkit.Main(m, &zkAddr) }
