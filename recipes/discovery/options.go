package discovery

import (
	"go.uber.org/zap"
)

// Option configures a Discovery.
type Option func(*options)

type options struct {
	// enabledField writes "enabled" for instances whose Enabled is nil
	// (as true): Curator's JsonInstanceSerializer with
	// compatibleSerializationMode false. Default false: Curator's default,
	// compatible, serializer, which leaves the field out.
	enabledField bool
	// failIfOwned makes Register fail with ErrOwnedByOtherSession while
	// another session's node holds the instance's path. Default false:
	// Register waits for that node to go (a restart after a crash).
	failIfOwned bool
	// takeOver makes Register delete another session's node holding a
	// Dynamic instance's path (Curator's way). Default false.
	takeOver bool
	// maxSize bounds the instance JSON, in bytes. Default
	// DefaultMaxInstanceSize.
	maxSize int
	// log is the logger. Default nil: the client's, named "discovery".
	log *zap.Logger
}

// DefaultMaxInstanceSize is the default bound on an instance's JSON: under
// ZooKeeper's default jute.maxbuffer (1 MiB less one byte) with room for
// the request's path and ACL.
const DefaultMaxInstanceSize = 1<<20 - 4096

// WithEnabledField writes Curator's "enabled" field in every instance
// registered (as true when the instance's Enabled is nil), as Curator's
// JsonInstanceSerializer does with compatibleSerializationMode false.
// Without it an instance is written as Curator's default serializer writes
// it, without the field, unless its Enabled is set. Curator readers older
// than 2.10 (CURATOR-275) fail on the field.
func WithEnabledField() Option { return func(o *options) { o.enabledField = true } }

// WaitForOwner makes Register wait while the instance's path is held by
// an ephemeral node of another session: typically this service's previous
// process, restarted after a crash before its session expired. It is the
// default (it undoes FailIfOwned and TakeOver). Register logs a warning naming the
// owner's session and returns once that node has gone (the server deletes
// a dead session's node within its session timeout) and ours is made; if
// ctx ends first, its error matches both ctx's error and
// ErrOwnedByOtherSession and names the owner. The node is never deleted
// or overwritten: Curator deletes it, and so deletes a live duplicate's
// registration too.
func WaitForOwner() Option {
	return func(o *options) { o.failIfOwned, o.takeOver = false, false }
}

// FailIfOwned makes Register return ErrOwnedByOtherSession at once, naming
// the owner's session, when the instance's path is held by an ephemeral
// node of another session, instead of waiting for it to go (the default,
// WaitForOwner): for fleets where a second process with the same id is a
// mistake to report rather than a restart to wait out.
func FailIfOwned() Option {
	return func(o *options) { o.failIfOwned, o.takeOver = true, false }
}

// TakeOver makes Register delete the ephemeral node of another session
// that holds a Dynamic instance's path, and make ours at once, as
// Curator's ServiceDiscovery does: a process restarted after a crash need
// not wait for its old session to expire. It is only safe when no other
// live process registers the same id: that process's registration is
// deleted (it waits for ours to go if it uses this package; Curator's
// takes it back at its next reconnection). The take-over is done once, at
// Register (node.TakeOver): a node of another session that appears later
// is waited out. DynamicSequential instances never meet another's node.
// (Static and Permanent instances, PERSISTENT nodes, refuse an ephemeral
// node of another session with ErrOwnedByOtherSession whatever the
// option, and overwrite a persistent one, as Curator.) WaitForOwner,
// FailIfOwned and TakeOver exclude each other: the last one given wins.
func TakeOver() Option {
	return func(o *options) { o.takeOver, o.failIfOwned = true, false }
}

// WithMaxInstanceSize bounds the JSON of an instance Register and Update
// write, in bytes (default DefaultMaxInstanceSize); a larger instance is
// refused with ErrTooLarge. Raise it only for servers run with a larger
// jute.maxbuffer (framework.WithJuteMaxBuffer).
func WithMaxInstanceSize(n int) Option {
	return func(o *options) {
		if n > 0 {
			o.maxSize = n
		}
	}
}

// WithLogger sets the logger (default: the client's, named "discovery").
// Registrations and re-registrations log at Info, malformed instances
// other registrants wrote at Warn.
func WithLogger(log *zap.Logger) Option { return func(o *options) { o.log = log } }
