package retry

import (
	"context"
	"errors"

	"github.com/go-zookeeper/zk"
)

// ErrOperationTimeout reports that a ZooKeeper operation timed out without
// a known outcome (Curator's OPERATIONTIMEOUT). The zk client has no
// sentinel of its own for it, so code that detects the condition returns
// this one, or wraps it, and [IsRetryable] accepts it.
var ErrOperationTimeout = errors.New("retry: operation timed out")

// retryableError marks an error as retryable without changing its text or
// what it wraps.
type retryableError struct {
	err error
}

func (e *retryableError) Error() string { return e.err.Error() }

func (e *retryableError) Unwrap() error { return e.err }

// Retryable marks err as retryable: [IsRetryable] accepts the result and
// anything that wraps it, unless it wraps a context error. The result has
// err's text and errors.Is and errors.As see through it to err. Retryable
// returns nil for a nil err.
func Retryable(err error) error {
	if err == nil {
		return nil
	}
	return &retryableError{err: err}
}

// IsRetryable reports whether err leaves the outcome of an operation
// unknown, so trying again is the right response: connection loss
// (zk.ErrConnectionClosed, zk.ErrNoServer), [ErrOperationTimeout],
// zk.ErrSessionExpired, zk.ErrSessionMoved, and errors marked with
// [Retryable]. Errors are matched with errors.Is, so wrapped errors count.
//
// It is false for nil and for everything else, zk.ErrClosing, zk.ErrNoNode,
// zk.ErrNodeExists, zk.ErrBadVersion and zk.ErrNoAuth among them. It is
// false for any error that wraps context.Canceled or
// context.DeadlineExceeded, even a marked one: the caller's time is up,
// and an interrupted [Do] must not be retried by an enclosing one.
func IsRetryable(err error) bool {
	switch {
	case err == nil,
		errors.Is(err, context.Canceled),
		errors.Is(err, context.DeadlineExceeded):
		return false
	case errors.Is(err, zk.ErrConnectionClosed),
		errors.Is(err, zk.ErrNoServer),
		errors.Is(err, ErrOperationTimeout),
		errors.Is(err, zk.ErrSessionExpired),
		errors.Is(err, zk.ErrSessionMoved):
		return true
	}
	var marked *retryableError
	return errors.As(err, &marked)
}
