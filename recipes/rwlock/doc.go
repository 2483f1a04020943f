// Package rwlock provides a distributed read/write lock on ZooKeeper,
// wire-compatible with Curator's InterProcessReadWriteLock.
//
// # Znode layout
//
// Readers and writers share one directory and its sequence counter. Each
// waiter and holder owns one EPHEMERAL_SEQUENTIAL node,
// "<path>/_c_<uuid>-__READ__<seq>" for the read lock and
// "<path>/_c_<uuid>-__WRIT__<seq>" for the write lock, whose data is the
// client's default data (the local IP, as Curator writes) or the WithData
// bytes. A holder of the write lock that takes the read lock (downgrade)
// creates a plain EPHEMERAL node "<path>/_c_<uuid>-__READ__<seq>" carrying
// its write node's sequence number, as Curator 5.5 and later do. The lock
// path and its missing ancestors are created as containers, which the
// server deletes once empty. Children that carry neither lock name are
// ignored; another lock recipe's nodes (a mutex's "lock-", a leader
// latch's, a semaphore's leases in "<path>/leases") are refused with
// ErrLayoutMismatch
// (locking.RefusingLayouts). Go and Java processes contend correctly on
// one path.
//
// # Guarantees
//
// The write lock is held by the node first among all read and write nodes;
// a read lock is held by a node with no write node ahead of it. Both are
// granted in sequence order, so a queued writer gets the lock after the
// readers ahead of it and before the readers that came after it. A writer
// waits for the node just ahead of it, a reader for the nearest write node
// ahead of it, so a writer's release wakes only the readers queued between
// it and the next writer (or that next writer); how the lock loop of
// recipes/locking waits for them is in docs/design.md, "The one loop".
//
// Each Lock is reentrant per RWLock (the *RWLock value is the owner; Go has
// no thread identity). An RWLock holding the write lock gets the read lock
// at once; its read node takes the write node's place in the queue, so
// releasing the write lock leaves a read hold that a queued writer still
// waits for (CURATOR-621). An RWLock holding only the read lock asking for
// the write lock gets ErrUpgradeNotSupported at once, where Curator
// deadlocks. A failed or cancelled Acquire leaves no node; no Acquire that
// did not acquire returns a nil error.
//
// # Connection loss
//
// Under the client's ErrorPolicy (connstate.StandardPolicy by default) a
// Suspended or Lost state ends a hold: Done closes, Err returns ErrLockLost,
// and the node is deleted as soon as the connection allows. Waiting
// acquirers keep their place across Suspended and Reconnected on the same
// session; after Lost they make a new node.
package rwlock
