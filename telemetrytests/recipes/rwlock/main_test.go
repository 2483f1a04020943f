package rwlock_test

import (
	"testing"

	"github.com/gocurator/curator/internal/testkit"
)

// zkAddr is the package's ZooKeeper server, started by TestMain for every
// test; each test works in a namespace of its own (testkit.Unique).
var zkAddr string

func TestMain(m *testing.M) { testkit.Main(m, &zkAddr) }
