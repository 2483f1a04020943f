package framework

import (
	"fmt"

	"github.com/gocurator/curator/zktest"
)

// SharedServerAddr returns the connect string of the package's shared
// server, starting it on first use. It is for the examples, which live in
// package framework_test and so cannot reach server(t); TestMain closes the
// server after them.
func SharedServerAddr() string {
	sharedOnce.Do(func() { sharedSrv, sharedErr = zktest.Launch() })
	if sharedErr != nil {
		panic(fmt.Sprintf("starting the shared ZooKeeper server: %v", sharedErr))
	}
	return sharedSrv.ConnectString()
}
