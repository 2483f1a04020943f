package semaphore_test

import (
	"testing"

	"github.com/gocurator/curator/internal/testkit"
)

// zkAddr is the package's ZooKeeper server, started by TestMain for every
// test, benchmark and example.
var zkAddr string

func TestMain(m *testing.M) { testkit.Main(m, &zkAddr) }
