// Package semaphore provides a distributed counting semaphore with leases on
// ZooKeeper, wire-compatible with Curator's InterProcessSemaphore (V1 layout,
// the default) and InterProcessSemaphoreV2 (CuratorV2), and a non-reentrant
// mutex on the V2 layout, Curator's InterProcessSemaphoreMutex (NewMutex).
//
// # Znode layout
//
// V1 (default): each lease, held or waited for, is one EPHEMERAL_SEQUENTIAL
// node "<path>/_c_<uuid>-lock-<seq>" (data: the client's default data, the
// local IP, or WithData). A node holds a lease iff fewer than max nodes sort
// before it; a waiter waits for the node max places ahead of it. This is
// the shared lock loop of package locking with the maximum as its limit
// (its design: docs/design.md, "The one loop"): FIFO, no herd, one write to
// acquire and one to release.
//
// V2 (CuratorV2): a gate mutex at "<path>/locks" (nodes
// "_c_<uuid>-lock-<seq>", package mutex) and lease nodes
// "<path>/leases/_c_<uuid>-lease-<seq>", EPHEMERAL_SEQUENTIAL. An acquirer
// takes the gate, creates its lease node and lists leases/: it holds a lease
// iff there are at most max children, else it waits, still holding the gate,
// for the children to change. It releases the gate in every case. Only the
// gate holder waits on leases/, so releases wake one process. Use V2 on paths
// shared with Java processes that use InterProcessSemaphoreV2. V2 runs on
// the same lock loop as V1 (package locking), as a driver whose nodes live
// in leases/, whose decision counts every child there, and whose attempts
// begin by taking the gate: ownership checks, starting over and clean-up
// are the loop's.
//
// Directories are created as containers, which the server deletes once
// empty. The two layouts must not share a path: V1 counts nodes under the
// path and V2 counts leases/ children, so together they would admit too
// many. An acquire that finds the other layout at work fails with
// ErrLayoutMismatch and leaves nothing behind.
//
// What counts as the V2 layout at work is a node in "locks" or "leases": a
// V1 acquire that sees those directories lists them, and refuses the path
// if either holds any node (a gate or a lease, ours, Curator's or foreign).
// Empty "locks" and "leases" containers are no layout: V2 acquirers, ours
// and Curator's, leave them behind after every use until the server reaps
// them (its container check runs every 60 s by default), and refusing them
// would refuse V1 for that long for no lease at all. Over-admission stays
// impossible between our two modes: a V2 acquire makes its gate and lease
// nodes before it looks for V1 nodes, and a V1 acquire makes its node
// before it lists the V2 directories, so of two acquirers racing on one
// path at least one sees the other's node and refuses. Curator's Java V2
// does not look for V1 nodes, so it cannot refuse a V1 user: do not use V1
// on a path that Java processes use in V2 mode (V1 refuses such a path
// only while a Java gate or lease node exists).
//
// A V2 acquire that fails (refused, no lease free for TryAcquire, ctx
// ended, an error) deletes its lease and gate nodes and then "leases" and
// "locks" if they are empty, so nothing it may have made stays behind;
// non-empty directories stay, and so does the semaphore's own path (an
// empty container is in nobody's way). When ctx ended or the connection is
// down, the node deletes finish in the background and the empty containers
// are left to the server: they no longer make V1 refuse the path.
//
// # Guarantees
//
// At most max leases are held at once, across all processes. The maximum is
// fixed by New or read from a shared.Count (WithMaxLeasesFrom): raising it
// lets waiters in at once, lowering it admits nobody new until enough
// leases are returned. A waiting Acquire holds the same few goroutines
// however often it is woken (one of them follows the shared count's
// changes). A semaphore is not reentrant: every Acquire is one more lease.
//
// A failed or cancelled Acquire, AcquireN or TryAcquire returns a non-nil
// error and leaves no lease or gate node behind (how, in every case of the
// connection: docs/design.md, "Nothing left behind"); AcquireN returns the
// leases it took before failing. TryAcquire reports a busy semaphore as
// (nil, false, nil), as every handle's try variant does (busy is not an
// error).
//
// # Connection loss
//
// A Lease ends when the client's ErrorPolicy says so (Suspended and Lost
// under connstate.StandardPolicy, Lost under SessionPolicy): Done closes, Err
// returns ErrLockLost, and its node is deleted as soon as the connection
// allows. V1 waiters keep their place across Suspended and Reconnected on the
// same session, and start over with a new node after Lost. A V2 acquirer
// that waits behind the gate starts over when the ErrorPolicy ends its gate
// hold, since waiting on beside the next gate holder could block both.
// Starting over runs under the client's retry policy.
package semaphore
