package connstate

// ErrorPolicy decides which states end a lock hold. Recipes consult the
// client's policy on every state change.
type ErrorPolicy interface {
	// IsError reports whether s ends every hold of the client.
	IsError(s State) bool
}

// StandardPolicy ends holds on Suspended and Lost (Curator's
// StandardConnectionStateErrorPolicy). It is the default: while disconnected
// a holder cannot know whether its session is still alive, so it must stop
// acting as the holder.
type StandardPolicy struct{}

// IsError reports true for Suspended and Lost.
func (StandardPolicy) IsError(s State) bool { return s == Suspended || s == Lost }

// SessionPolicy ends holds only on Lost (Curator's
// SessionConnectionStateErrorPolicy). Holders keep acting through short
// disconnects; pair it with fencing tokens.
type SessionPolicy struct{}

// IsError reports true for Lost only.
func (SessionPolicy) IsError(s State) bool { return s == Lost }
