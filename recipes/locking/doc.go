// Package locking is the one lock loop every lock recipe runs on, Curator's
// LockInternals done once: a recipe is a Driver that says how its node is
// named and when a node holds the lock.
//
// # The loop
//
// Acquire creates a protected EPHEMERAL_SEQUENTIAL node under path (parents
// are created as containers), lists the children, keeps those that carry the
// driver's lock name, sorts them by sequence number (signed 32-bit,
// wrap-aware), and asks the driver's GetsTheLock. If the node does not hold
// the lock, it watches the one node the driver names, with getData (not
// exists, which would leave a watch behind on a missing node), and waits for
// that node to change, for ctx to end or for the client to close. A missing
// node to watch means "look again", never "wait".
//
// When the watched node was the only one in the way, its deletion grants the
// lock without listing again: sequence numbers only grow, so no node can be
// created ahead of ours. The loop still confirms, with one exists call, that
// our own node is there and belongs to the live session; a node deleted by an
// operator or lost with its session is never granted.
//
// # Guarantees
//
// A failed or cancelled Acquire deletes its node before returning (on a
// context detached from the caller's; if the connection is down, a
// guaranteed delete keeps trying in the background). If ctx ends while the
// create itself is in flight, Acquire returns at once and the node, if the
// server made it, is found by its protected name and deleted in the
// background as soon as that create completes. An Acquire that did not
// acquire never returns a nil error. Own nodes of a dead session are never
// waited on: they are deleted and the node is made again, under the client's
// retry policy.
//
// # Connection loss
//
// A Hold ends when the client's ErrorPolicy says a state is an error
// (Suspended and Lost under StandardPolicy, Lost under SessionPolicy): its
// Done channel closes, Err returns ErrLockLost, and its node is deleted as
// soon as the connection allows, so it blocks nobody once the session is
// back.
package locking
