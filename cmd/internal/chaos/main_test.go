package chaos

import (
	"testing"

	"github.com/gocurator/curator/internal/testkit"
)

// zkAddr is the package's ZooKeeper server, started by TestMain for the
// tests that need one server (Run starts its own for the chaos run).
var zkAddr string

func TestMain(m *testing.M) { testkit.Main(m, &zkAddr) }
