package clienttel

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/go-zookeeper/zk"
)

func TestResultOf(t *testing.T) {
	for _, tt := range []struct {
		name string
		err  error
		want Result
	}{
		{"nil", nil, ResOK},
		{"canceled", context.Canceled, ResCanceled},
		{"deadline, wrapped", fmt.Errorf("get /a: %w", context.DeadlineExceeded), ResDeadline},
		{"no node", zk.ErrNoNode, ResNoNode},
		{"node exists", zk.ErrNodeExists, ResNodeExists},
		{"bad version", zk.ErrBadVersion, ResBadVersion},
		{"not empty", zk.ErrNotEmpty, ResNotEmpty},
		{"session expired", zk.ErrSessionExpired, ResSessionExpired},
		{"connection loss", zk.ErrConnectionClosed, ResConnectionLoss},
		{"other", errors.New("boom"), ResError},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := ResultOf(tt.err); got != tt.want {
				t.Fatalf("ResultOf(%v) = %s, want %s", tt.err, got, tt.want)
			}
		})
	}
}

// Every operation and result has a name: the attribute values are never
// empty.
func TestNames(t *testing.T) {
	for op := range numOps {
		if op.String() == "" {
			t.Errorf("operation %d has no name", op)
		}
	}
	for res := range numResults {
		if res.String() == "" {
			t.Errorf("result %d has no name", res)
		}
	}
}
