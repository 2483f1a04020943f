package bench

import (
	"testing"

	"github.com/gocurator/curator/internal/testkit"
)

// zkAddr is the package's ZooKeeper server, started by TestMain for the
// tests that need a plain one.
var zkAddr string

func TestMain(m *testing.M) {
	// The multi-process rows re-execute this test binary as their
	// sessions.
	if ServeSessionIfAsked() {
		return
	}
	testkit.Main(m, &zkAddr)
}
