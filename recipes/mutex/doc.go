// Package mutex provides a reentrant distributed mutex on ZooKeeper,
// wire-compatible with Curator's InterProcessMutex.
//
// # Znode layout
//
// Each waiter and the holder own one EPHEMERAL_SEQUENTIAL node
// "<path>/_c_<uuid>-lock-<seq>" whose data is the client's default data (the
// local IP, as Curator writes) or the WithData bytes; empty for a revocable
// mutex. The lock path and its missing ancestors are created as containers,
// which the server deletes once empty. Children without the lock name are
// ignored; another lock recipe's nodes (a read/write lock's "__READ__" or
// "__WRIT__", a leader latch's, a semaphore's leases in "<path>/leases")
// are refused with ErrLayoutMismatch (locking.RefusingLayouts). Go and
// Java processes contend correctly on one path.
//
// # Guarantees
//
// The node with the lowest sequence number holds the lock; every other node
// waits in the queue on the lock loop of recipes/locking, whose design
// (which nodes a waiter watches, and why a release wakes no herd) is in
// docs/design.md, "The one loop". A Mutex is reentrant per handle: the *Mutex value is the owner (Go
// has no thread identity), so two goroutines that must exclude each other use
// two handles. FencingToken (the holder node's czxid) grows with every new
// holder; CheckOp and FencedMulti make ZooKeeper itself reject a write once
// the hold is gone. A failed or cancelled Acquire leaves no node.
//
// With WithLocalHandover, the handles of one client on one path share one
// node and pass the hold among themselves with no request, at most max
// times in a row; the cohort's next node is then created in one
// transaction with the old node's delete: a hand-over to another process
// at a streak's end costs the next holder one round trip (two when the
// create and the delete were separate), and no process holds more than
// max+1 times in a row while others wait. docs/mutex.md, "Local
// hand-over", has the counts and the tests that make them.
//
// # Connection loss
//
// Under the client's ErrorPolicy (connstate.StandardPolicy by default) a
// Suspended or Lost state ends the hold: Done closes and Err returns
// ErrLockLost. Waiting acquirers keep their place across Suspended and
// Reconnected on the same session; after Lost they make a new node.
package mutex
