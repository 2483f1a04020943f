package group

import "fmt"

// EventType is what happened to a member of the group.
type EventType int

// The changes Listen reports.
const (
	// Joined: a member's node appeared (or was found by the first load,
	// or after a reconnection).
	Joined EventType = iota + 1
	// Left: a member's node went.
	Left
	// Updated: a member's payload changed.
	Updated
)

// String returns the type's name.
func (t EventType) String() string {
	switch t {
	case Joined:
		return "joined"
	case Left:
		return "left"
	case Updated:
		return "updated"
	}
	return fmt.Sprintf("EventType(%d)", int(t))
}

// Event is a change of the group's membership.
type Event struct {
	Type EventType
	// ID is the member's id, its node's name.
	ID string
	// Payload is the member's payload: the new one for Joined and
	// Updated, the last one seen for Left. It must not be modified.
	Payload []byte
	// Session is the session that owns the member's node.
	Session int64
}
