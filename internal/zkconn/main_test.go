package zkconn

import (
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// eventually polls cond until it reports true, failing the test after
// testDeadline.
func eventually(t testing.TB, what string, cond func() (bool, error)) {
	t.Helper()
	deadline := time.NewTimer(testDeadline)
	defer deadline.Stop()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	var lastErr error
	for {
		ok, err := cond()
		if ok {
			return
		}
		lastErr = err
		select {
		case <-deadline.C:
			t.Fatalf("%s: not within %v (last error: %v)", what, testDeadline, lastErr)
		case <-tick.C:
		}
	}
}
