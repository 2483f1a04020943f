package framework

import (
	"fmt"
	"testing"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/internal/telemetry/clienttel"
)

// A request that failed because the client closed is recorded as closed,
// whatever it wraps; the rest is clienttel.ResultOf's mapping.
func TestResultOf(t *testing.T) {
	for _, tt := range []struct {
		name string
		err  error
		want clienttel.Result
	}{
		{"ok", nil, clienttel.ResOK},
		{"closed", fmt.Errorf("get /a: %w", ErrClosed), clienttel.ResClosed},
		{"closed over a connection loss", fmt.Errorf("%w: %w", ErrClosed, zk.ErrConnectionClosed), clienttel.ResClosed},
		{"no node", zk.ErrNoNode, clienttel.ResNoNode},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := resultOf(tt.err); got != tt.want {
				t.Fatalf("resultOf(%v) = %s, want %s", tt.err, got, tt.want)
			}
		})
	}
}
