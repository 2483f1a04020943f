package shared_test

import (
	"testing"

	"github.com/gocurator/curator/internal/testkit"
)

// zkAddr is the address of the package's ZooKeeper server, started by
// TestMain for every test and example of the package.
var zkAddr string

func TestMain(m *testing.M) { testkit.Main(m, &zkAddr) }
