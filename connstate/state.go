package connstate

import "strconv"

// State is the connection state of a client, as Curator reports it.
type State int

// The states, in the order a client usually goes through them.
const (
	// Connected is reported once, for the client's first session.
	Connected State = iota + 1
	// Suspended is reported when the connection to the server drops. The
	// session may still be alive.
	Suspended
	// Reconnected is reported when the client is connected again, either on
	// the same session (after Suspended) or on a new one (after Lost).
	Reconnected
	// Lost is reported when the session has expired: every ephemeral node
	// and watch of that session is gone.
	Lost
	// ReadOnly is reported when the client is connected to a server that is
	// partitioned from its quorum and serves reads only.
	ReadOnly
)

var stateNames = [...]string{
	Connected:   "Connected",
	Suspended:   "Suspended",
	Reconnected: "Reconnected",
	Lost:        "Lost",
	ReadOnly:    "ReadOnly",
}

// String returns the state's name, such as "Suspended".
func (s State) String() string {
	if s >= Connected && int(s) < len(stateNames) {
		return stateNames[s]
	}
	return "State(" + strconv.Itoa(int(s)) + ")"
}

// IsConnected reports whether the client can talk to a server in state s.
func (s State) IsConnected() bool {
	return s == Connected || s == Reconnected || s == ReadOnly
}
