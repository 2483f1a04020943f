package bench

import (
	"testing"

	"github.com/gocurator/curator/internal/testkit"
)

// zkAddr is the package's ZooKeeper server, started by TestMain for the
// tests that need a plain one.
var zkAddr string

func TestMain(m *testing.M) { testkit.Main(m, &zkAddr) }
