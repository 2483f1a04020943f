package queue_test

import (
	"testing"

	"github.com/gocurator/curator/internal/testkit"
)

// zkAddr is the package's ZooKeeper server, started by TestMain for every
// test and example (which read it from $GOCURATOR_ZK, as a program would);
// each test works in a namespace of its own (testkit.Unique).
var zkAddr string

func TestMain(m *testing.M) { testkit.Main(m, &zkAddr) }
