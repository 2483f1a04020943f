// Package multilock holds several locks at once, all or nothing, on
// ZooKeeper: Curator's InterProcessMultiLock, over any mix of mutexes
// (recipes/mutex), read and write locks (recipes/rwlock), semaphore
// mutexes and semaphore leases (recipes/semaphore).
//
// # Znode layout
//
// None of its own: each member is its recipe's handle, acquired and
// released with that handle's verbs, so its nodes are that recipe's (and
// Curator's: a Java InterProcessMultiLock, or a plain Java lock, on the
// same paths excludes ours and is excluded by it).
//
// # Guarantees
//
// Acquire takes the members one at a time in one global order, by path
// (segment by segment; at one path the write lock before the read lock of
// the same RWLock), whatever order New was given: two multi-locks that
// name the same locks in different orders therefore never wait for each
// other in a cycle, where Curator, which follows the caller's order,
// deadlocks. ctx's deadline bounds the whole acquire (Curator gives each
// member the whole timeout, so its acquire can return true long after it).
// On failure (ctx ended, a member's error, a busy member for TryAcquire)
// the members taken so far are released in reverse order before Acquire
// returns, so nothing is held and no node is left; the error names the
// member. New refuses members that would wait for each other inside one
// multi-lock (two locks on one path, other than the write and read lock of
// one RWLock, or leases).
//
// A held multi-lock is one hold: Done closes when any member's hold ends,
// Err names that member, Release releases every member, last first.
// CheckOps returns a check of every member's node, to put in front of a
// write in one transaction.
//
// # Connection loss
//
// Each member follows its recipe: under the client's ErrorPolicy a
// Suspended or Lost state ends its hold, which ends the multi-lock's (Done
// closes, Err wraps ErrLockLost). Release then still releases the other
// members. A failed acquire's releases run while the connection allows
// (framework.Client.CleanupContext); while it is down the members'
// guaranteed deletes finish in the background and Acquire returns at its
// deadline.
package multilock
