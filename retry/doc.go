// Package retry provides Apache Curator's retry policies and a context-aware retry loop.
//
// # Policies
//
// A [Policy] answers one question after a failed attempt: may the operation
// be tried again, and how long should the caller sleep first. The
// constructors mirror Curator's set: [ExponentialBackoff],
// [BoundedExponentialBackoff], [NTimes], [OneTime], [UntilElapsed],
// [Forever] and [SessionFailed]. Every policy built here is safe for
// concurrent use by any number of calls.
//
// # The retry loop
//
// [Do] runs an operation, and after each failure that [IsRetryable] accepts
// it asks the policy, sleeps and tries again. The sleep blocks the caller
// and ends early when the context ends. Do never starts a goroutine and
// never calls the operation concurrently with itself.
//
// # Retryable errors
//
// Only failures that say nothing about the outcome of the operation itself
// are retried: connection loss, operation timeout, session expiry and
// session moved. Every other error (a missing node, a version conflict, a
// closing client, a cancelled context) is returned at once. Other packages
// mark their own errors retryable with [Retryable].
//
// # One budget per call
//
// Retry loops nested inside each other multiply: three retries around
// three retries are sixteen attempts (Curator's CURATOR-559). Do therefore
// stores its retry budget, the retry count and the start time, in the
// context it passes to the operation. A Do called with that context, or a
// context derived from it, charges its retries to the same budget, and it
// retries only while its own policy and the policies of every enclosing Do
// allow it, sleeping for the longest of their answers. [WithNewBudget] starts a separate budget, for work that outlives
// the call that started it.
//
// # Invalid policies
//
// Constructors keep Curator's signatures and do not return errors. Given
// a negative duration or count, or a nil policy, they return a policy that
// carries an error wrapping [ErrInvalidPolicy]: [Do] returns that error at
// once without calling the operation, and [Validate] reports it up front.
// The one value that is clamped instead is ExponentialBackoff's retry
// count, which is capped at [MaxExponentialRetries] as in Curator.
//
// # cenkalti/backoff
//
// [FromBackOff] turns a github.com/cenkalti/backoff/v4 BackOff factory into
// a Policy, and [ToBackOff] turns a Policy into a BackOff for
// backoff.Retry and friends.
package retry
