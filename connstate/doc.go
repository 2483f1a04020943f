// Package connstate defines the connection states of a ZooKeeper client, the
// policies that decide which states end a lock hold, and an ordered,
// never-dropping listener fan-out.
//
// # States
//
// A client reports Connected once, when its first session is established.
// A disconnect is reported as Suspended; getting back on the same session as
// Reconnected. When the session expires, Lost is reported, either because the
// server said so after a reconnect or because the client stayed Suspended for
// the negotiated session timeout (Curator's simulated expiration). The next
// session after a Lost is reported as Reconnected.
//
// # Error policies
//
// StandardPolicy treats Suspended and Lost as errors: a lock holder must
// assume it lost the lock as soon as the connection drops. SessionPolicy only
// treats Lost as an error, trusting ephemeral nodes to survive a short
// disconnect.
//
// # Listeners
//
// Listeners receive every state in order. Each listener has its own unbounded
// queue and goroutine, so a slow listener delays nobody else, and the
// ZooKeeper event goroutine never runs listener code.
package connstate
