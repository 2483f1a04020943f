package atomic_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gocurator/curator/internal/curatorjava"
)

// waitPrefix returns the driver's next event that starts with prefix.
func waitPrefix(d *curatorjava.Driver, prefix string, timeout time.Duration) (string, error) {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for {
		select {
		case ev, ok := <-d.Events():
			if !ok {
				return "", fmt.Errorf("driver exited waiting for %q", prefix)
			}
			if strings.HasPrefix(ev, prefix) {
				return ev, nil
			}
		case <-timer.C:
			return "", fmt.Errorf("no event %q within %v", prefix, timeout)
		}
	}
}

// contextWithDeadline returns a context that ends after d, or at cleanup.
func contextWithDeadline(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}
