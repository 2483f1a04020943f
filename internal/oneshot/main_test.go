package oneshot

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/gocurator/curator/zktest"
)

// srv is the package's server, shared by the tests; each works under a
// root of its own.
var srv *zktest.Server

func TestMain(m *testing.M) {
	var err error
	if srv, err = zktest.Launch(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	if err := srv.Close(); err != nil && code == 0 {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	if err := goleak.Find(); code == 0 && err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	os.Exit(code)
}
