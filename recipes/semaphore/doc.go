// Package semaphore provides a distributed counting semaphore with leases on
// ZooKeeper, wire-compatible with Curator's InterProcessSemaphoreV2 (the
// default) and its deprecated InterProcessSemaphore (CuratorV1), and a
// non-reentrant mutex on the V2 layout, Curator's
// InterProcessSemaphoreMutex (NewMutex).
//
// # Znode layout
//
// V2 (default; CuratorV2 says so explicitly): a gate mutex at
// "<path>/locks" (nodes "_c_<uuid>-lock-<seq>", package mutex) and lease
// nodes "<path>/leases/_c_<uuid>-lease-<seq>", EPHEMERAL_SEQUENTIAL (data:
// the client's default data, the local IP, or WithData). An acquirer takes
// the gate, creates its lease node and lists leases/: it holds a lease iff
// there are at most max children, else it waits, still holding the gate,
// for the children to change. It releases the gate in every case. Only the
// gate holder waits on leases/, so releases wake one process. This is what
// current Curator code uses, so a port that shares a path with Java
// processes needs no option. V2 runs on the shared lock loop (package
// locking), as a driver whose nodes live in leases/, whose decision counts
// every child there, and whose attempts begin by taking the gate:
// ownership checks, starting over and clean-up are the loop's.
//
// V1 (CuratorV1): each lease, held or waited for, is one
// EPHEMERAL_SEQUENTIAL node "<path>/_c_<uuid>-lock-<seq>". A node holds a
// lease iff fewer than max nodes sort before it; a waiter waits for the
// node max places ahead of it: the lock loop with the maximum as its limit
// (docs/design.md, "The one loop"): FIFO, no herd. Each V1 participant
// also keeps a trace, "<path>/leases/_c_<uuid>-v1-participant-<seq>"
// (EPHEMERAL_SEQUENTIAL), from before its node is made until after it is
// deleted.
//
// Directories are created as containers, which the server deletes once
// empty.
//
// # Two layouts on one path
//
// V1 counts nodes under the path and V2 counts leases/ children, so
// together they could admit too many. They recognise each other instead,
// both ways, and an acquire that finds the other layout at work fails with
// ErrLayoutMismatch and leaves nothing behind:
//
//   - A V1 acquire creates its trace with a listing of leases/ sent behind
//     it, and refuses if leases/ holds anything but V1 traces (a V2 lease,
//     ours or Curator's).
//   - A V2 acquire of ours, once its lease node exists, refuses if leases/
//     holds a V1 trace or the path a V1 node (Curator's V1 leaves no
//     trace).
//   - Curator's Java V2 cannot refuse, but it counts every child of
//     leases/, traces included: beside V1 participants it waits, it never
//     admits more than max. This is why the trace exists: a V1 check made
//     once, when its node is created, cannot see a Java V2 acquirer that
//     comes later.
//
// Of a V2 lease and a V1 trace, whichever is created second is seen by
// its creator's listing (ZooKeeper orders the creates, and a session's read
// follows its own writes), so one side always accounts for the other, also
// when both arrive at once. Empty "locks" and "leases" containers and gate
// nodes in "locks" are no V2 layout at work: V2 acquirers leave the
// containers behind after every use until the server reaps them, and a
// gate holder counts our traces when it lists leases/. Curator's
// deprecated Java InterProcessSemaphore (V1) knows of no other layout: a
// V2 acquire refuses its nodes, but it does not refuse ours.
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
// same session, and start over with a new node (and trace) after Lost. A V2 acquirer
// that waits behind the gate starts over when the ErrorPolicy ends its gate
// hold, since waiting on beside the next gate holder could block both.
// Starting over runs under the client's retry policy.
package semaphore
