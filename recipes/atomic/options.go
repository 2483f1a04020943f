package atomic

import (
	"time"

	"github.com/gocurator/curator/retry"
)

// Option configures a Long, Int or Value.
type Option func(*options)

type options struct {
	// policy bounds the optimistic tries; nil: the client's retry policy.
	policy retry.Policy
	// lockPath, when not empty, promotes a failed optimistic update to
	// tries under the mutex at lockPath (Curator's PromotedToLock).
	lockPath string
	// lockTimeout bounds the wait for the promoted lock; 0: ctx alone.
	lockTimeout time.Duration
	// promotedPolicy bounds the tries under the lock; nil: policy.
	promotedPolicy retry.Policy

	// clientPolicy and samePromoted say that policy is the client's and
	// promotedPolicy is policy (set by the constructor): handles alike in
	// that have their adds combined (see Number.TryAdd).
	clientPolicy, samePromoted bool
}

// WithRetryPolicy sets the policy that decides whether an optimistic update
// that met a concurrent write is tried again, and after what pause
// (Curator's constructor argument). The default is the client's retry
// policy. A nil policy keeps the default.
func WithRetryPolicy(p retry.Policy) Option {
	return func(o *options) {
		if p != nil {
			o.policy = p
		}
	}
}

// PromotedToLock makes an update whose optimistic tries all failed try again
// while holding the mutex at lockPath (recipes/mutex, Curator's
// InterProcessMutex layout), as Curator's PromotedToLock does: Go and Java
// handles promoted on one lock path take turns.
func PromotedToLock(lockPath string) Option {
	return func(o *options) { o.lockPath = lockPath }
}

// WithPromotedLockTimeout bounds the wait for the promoted lock (Curator's
// PromotedToLock timeout); an update that cannot have the lock in time is
// not applied (Result.Succeeded false, no error). Zero or less: wait as long
// as ctx allows.
func WithPromotedLockTimeout(d time.Duration) Option {
	return func(o *options) {
		if d > 0 {
			o.lockTimeout = d
		}
	}
}

// WithPromotedRetryPolicy sets the policy for the tries made under the
// promoted lock (Curator's PromotedToLock retry policy); the default is the
// optimistic policy. A nil policy keeps the default.
func WithPromotedRetryPolicy(p retry.Policy) Option {
	return func(o *options) {
		if p != nil {
			o.promotedPolicy = p
		}
	}
}
