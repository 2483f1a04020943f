package node

import (
	"time"

	"go.uber.org/zap"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/clock"
)

// Option configures a Node.
type Option func(*options)

type options struct {
	// mode is the create mode. Default framework.Ephemeral (Curator's
	// PersistentEphemeralNode); with WithTTL and no mode,
	// framework.PersistentWithTTL.
	mode    framework.Mode
	modeSet bool
	// protected names the first node "_c_<uuid>-<name>" (Curator's
	// withProtection). Default false.
	protected bool
	// ttl makes a PersistentTtlNode: the node and its touch child are TTL
	// nodes, the child touched every ttl/2. Default 0: none.
	ttl    time.Duration
	ttlSet bool // WithTTL was given: its value is checked, 0 included
	// noParents fails a create whose parent is missing instead of making
	// the missing ancestors as containers. Default false: containers are
	// made, as Curator's creatingParentContainersIfNeeded.
	noParents bool
	// expireAfterClose makes Close leave a TTL node for the server's TTL
	// reaper instead of deleting it (Curator's PersistentTtlNode.close).
	// Default false: Close deletes it.
	expireAfterClose bool
	// failIfOwned makes Start fail with ErrOwnedByOtherSession when an
	// ephemeral node of another session holds the path. Default false:
	// Start waits for that node to go (a restarted process's old node
	// goes when its session expires), as WaitForOwner says.
	failIfOwned bool
	// takeOver makes Start delete an ephemeral node of another session at
	// the path and make ours, as Curator does. Default false.
	takeOver bool
	// log is the logger. Default nil: the client's, named "node".
	log *zap.Logger
	// clock times the touches of a TTL node. Default clock.Real.
	clock clock.Clock
}

// WithMode sets the create mode of the node (default framework.Ephemeral).
// A sequential mode gets its sequence number at the first create; the node
// is made again under that same name, without a new number (Curator's
// PersistentNode does the same), so Path stays the same for the Node's
// life. TTL modes need WithTTL.
func WithMode(m framework.Mode) Option {
	return func(o *options) { o.mode, o.modeSet = m, true }
}

// Protected names the node "_c_<uuid>-<name>" (Curator's withProtection),
// so that a first create whose reply is lost is found, not made twice: use
// it with sequential modes. The name, once made, is kept for every
// re-creation.
func Protected() Option { return func(o *options) { o.protected = true } }

// WithTTL makes the node a PersistentTtlNode: the node is a
// PERSISTENT_WITH_TTL node (PERSISTENT_SEQUENTIAL_WITH_TTL with a sequential
// mode) with a child "touch", itself a TTL node, that is touched every ttl/2
// while the Node runs. Close deletes both, the touch child first, as it
// deletes a node of any mode (ExpireAfterClose leaves them to the server
// instead, as Curator does). If the Node stops without Close (the process
// dies, the client closes) the server deletes the touch child ttl after its
// last touch, then the node, within about 2×ttl plus its container check
// interval, even if the touch child was never made. The server needs
// zookeeper.extendedTypesEnabled=true; otherwise Start returns
// ErrTTLUnsupported. ttl must be between MinTTL and MaxTTL, the server's
// bounds (0, a negative ttl, or one beyond the bounds would make a plain
// node that no TTL reaps, or one the server refuses), and the mode
// persistent: Start returns an error matching ErrInvalidOption otherwise.
func WithTTL(ttl time.Duration) Option { return func(o *options) { o.ttl, o.ttlSet = ttl, true } }

// The bounds of WithTTL's ttl. The server keeps TTLs in whole
// milliseconds, in 40 bits: it refuses 0 and anything over 2^40-1 ms
// (about 34.8 years).
const (
	MinTTL = time.Millisecond
	MaxTTL = (1<<40 - 1) * time.Millisecond
)

// ExpireAfterClose makes Close leave a TTL node (WithTTL) in place, as
// Curator's PersistentTtlNode.close does: its touches stop, and the server
// deletes the touch child and then the node within about 2×ttl plus its
// container check interval, so that what the node announces stays visible
// for a grace period after its process stopped. Without it Close deletes
// the node at once. A Start that fails deletes what it made either way.
// Start returns ErrInvalidOption if the Node has no TTL.
func ExpireAfterClose() Option { return func(o *options) { o.expireAfterClose = true } }

// NoParentCreation makes the create fail when the node's parent is missing
// (Start returns an error matching zk.ErrNoNode) instead of making the
// missing ancestors as container nodes, which is the default (Curator's
// useParentCreation).
func NoParentCreation() Option { return func(o *options) { o.noParents = true } }

// WaitForOwner makes Start wait while the path is held by an ephemeral node
// of another session (this process restarted before its old session
// expired, or another process with the same path), watching for that
// node's deletion, and create ours once it has gone. It is the default: it
// undoes FailIfOwned. The Node logs a warning with the owner's session id
// and the expected wait (a dead session's node goes within its session
// timeout); if Start's ctx ends first, its error names the owner and
// matches both ctx's error and ErrOwnedByOtherSession. After Start, a Node
// whose path is taken by another session waits for it to go, reporting
// ErrOwnedByOtherSession as the Reason of its Recreating event; it never
// adopts or overwrites the other session's node (unless TakeOver, at
// Start).
func WaitForOwner() Option {
	return func(o *options) { o.failIfOwned = false }
}

// FailIfOwned makes Start return ErrOwnedByOtherSession at once, naming the
// owner's session, when the path is held by an ephemeral node of another
// session, instead of waiting for it to go (the default, WaitForOwner).
// Use it where a second process with the same path is a mistake to report
// rather than a restart to wait out. It cannot go with TakeOver.
func FailIfOwned() Option {
	return func(o *options) { o.failIfOwned = true }
}

// TakeOver makes Start delete an ephemeral node of another session that
// holds the path, and make ours, as Curator's PersistentNode does (which
// adopts it): a restarted process need not wait for its old session to
// expire. It is only safe when no other live process uses the path: if
// one does, both believe they hold it until that process's Node finds
// its node deleted; a Node of this package then waits for ours to go
// (Recreating with ErrOwnedByOtherSession) and never takes it back, but
// a Curator PersistentNode takes it back, and the two take turns. The
// take-over is checked against the node's version, so a node changed
// meanwhile is looked at again, and is done at Start only: after Start,
// another session's node is always waited out. It needs an ephemeral mode,
// and cannot go with FailIfOwned (Start returns ErrInvalidOption).
func TakeOver() Option {
	return func(o *options) { o.takeOver = true }
}

// WithLogger sets the logger (default: the client's, named "node").
// Registrations and losses log at Info, retries at Debug.
func WithLogger(log *zap.Logger) Option { return func(o *options) { o.log = log } }

// withClock sets the clock of the touches (tests).
func withClock(c clock.Clock) Option { return func(o *options) { o.clock = c } }
