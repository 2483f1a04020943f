package leader_test

import (
	"testing"

	"github.com/gocurator/curator/internal/testkit"
)

// zkAddr is the package's ZooKeeper server, started by TestMain for every
// test and example.
var zkAddr string

func TestMain(m *testing.M) { testkit.Main(m, &zkAddr) }
