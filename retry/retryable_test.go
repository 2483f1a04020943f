package retry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/go-zookeeper/zk"
)

func TestIsRetryable(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"connection closed", zk.ErrConnectionClosed, true},
		{"no server", zk.ErrNoServer, true},
		{"operation timeout", ErrOperationTimeout, true},
		{"session expired", zk.ErrSessionExpired, true},
		{"session moved", zk.ErrSessionMoved, true},
		{"wrapped connection closed", fmt.Errorf("create /a: %w", zk.ErrConnectionClosed), true},
		{"joined with a retryable error", errors.Join(io.EOF, zk.ErrSessionMoved), true},
		{"closing", zk.ErrClosing, false},
		{"no node", zk.ErrNoNode, false},
		{"node exists", zk.ErrNodeExists, false},
		{"bad version", zk.ErrBadVersion, false},
		{"no auth", zk.ErrNoAuth, false},
		{"not empty", zk.ErrNotEmpty, false},
		{"canceled", context.Canceled, false},
		{"deadline exceeded", context.DeadlineExceeded, false},
		{"other", io.EOF, false},
		{"marked", Retryable(io.EOF), true},
		{"wrapped marked", fmt.Errorf("framework: %w", Retryable(io.EOF)), true},
		{"marked context error", Retryable(context.DeadlineExceeded), false},
		{"interrupted Do", interrupted(context.Canceled, zk.ErrConnectionClosed), false},
		{"deadline joined with connection loss", errors.Join(context.DeadlineExceeded, zk.ErrConnectionClosed), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := IsRetryable(tt.err); got != tt.want {
				t.Errorf("IsRetryable(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}

func TestRetryableKeepsTheError(t *testing.T) {
	if Retryable(nil) != nil {
		t.Fatal("Retryable(nil) != nil")
	}
	base := &customError{"lost"}
	err := Retryable(base)
	if err.Error() != "lost" {
		t.Errorf("Error() = %q, want %q", err.Error(), "lost")
	}
	if !errors.Is(err, base) {
		t.Error("errors.Is does not see through Retryable")
	}
	var ce *customError
	if !errors.As(err, &ce) || ce != base {
		t.Error("errors.As does not see through Retryable")
	}
}

type customError struct{ msg string }

func (e *customError) Error() string { return e.msg }
