package node

import "fmt"

// State is where a Node stands.
type State int

// The states of a Node, reported by Status and Listen.
const (
	// Idle: not started yet, or a Start that failed.
	Idle State = iota
	// Creating: started, the first create not done yet.
	Creating
	// Registered: our node exists, made in the live session (for an
	// ephemeral node, its ephemeralOwner is that session).
	Registered
	// Recreating: our node was lost (Event.Reason says why) and is being
	// made again; while a node of a dead session or of another session
	// holds the path, the Node waits for it to go.
	Recreating
	// Closed: Close was called, or the client closed.
	Closed
)

// String returns the state's name.
func (s State) String() string {
	switch s {
	case Idle:
		return "idle"
	case Creating:
		return "creating"
	case Registered:
		return "registered"
	case Recreating:
		return "recreating"
	case Closed:
		return "closed"
	}
	return fmt.Sprintf("State(%d)", int(s))
}

// Event is a change of a Node's state.
type Event struct {
	State State
	// Path is our node's path (with its protected prefix and sequence
	// number), "" until the first create.
	Path string
	// Session is the session that owns our node (its ephemeralOwner) when
	// Registered and ephemeral; 0 otherwise.
	Session int64
	// Czxid is the zxid that created our node when Registered, 0
	// otherwise: it tells one incarnation of the node from the next.
	Czxid int64
	// Reason says why the Node is Recreating: ErrSessionLost,
	// ErrNodeDeleted, ErrOwnedByOtherSession (the path is held by another
	// session's node, which the Node waits out), or the error of the last
	// attempt (a long partition, no permission, ...). nil otherwise.
	Reason error
}
