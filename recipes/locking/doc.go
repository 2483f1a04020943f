// Package locking is the one lock loop every lock recipe runs on, Curator's
// LockInternals done once: a recipe is a Driver that says how its node is
// named and when a node holds the lock.
//
// # The loop
//
// Acquire creates a protected node under path (or in the driver's
// directory there; parents are created as containers) and sends the
// listing of that directory right behind the create: ZooKeeper answers a
// session's requests in order, so the listing shows our node, and an
// uncontended acquire costs one round trip. It keeps the
// children that carry the driver's lock name, sorts them by sequence number
// (signed 32-bit, wrap-aware) and asks the driver's GetsTheLock.
//
// A node that does not hold watches, with getData (not exists, which would
// leave a watch behind on a missing node), at most three nodes, set in one
// round trip: P, the node the driver names; PP, the node the driver would
// name if P were gone (unless P's deletion alone lets us hold); and its own
// node. When PP goes, the waiter lists again while P still holds, off the
// critical path, and usually finds P alone in its way. Then P's deletion
// grants the lock with no request at all: a hand-over costs the holder's
// delete and its notification, one round trip instead of two, and each
// delete notifies at most the waiters that watch it as P or as PP, not a
// herd. A missing node to watch means "look again", never "wait".
//
// The grant without a read is sound because (1) no node that would stop us
// can appear ahead of ours: sequence numbers only grow, and a driver that
// makes nodes with old numbers (rwlock's downgrade) says so by not setting
// Verdict.HeldWhenGone; (2) the loop checks the rest itself: it asks the
// driver about the listing without P, and grants on P's deletion only if
// the driver then says Held; (3) our node is watched too, and the events of
// a session arrive in the order the server sent them
// (framework.Client.GetWOrdered), so if no event on our node came before
// P's deletion, our node existed when P went; and (4) the session is still
// the node's. After any state change (a reconnection sets watches again and
// they fire in no particular order) the loop reads instead, as it does when
// the driver's claim and the loop's check disagree.
//
// # Directories, children watches and attempts
//
// A driver that decides on a whole directory rather than on one node ahead
// says so with a Layout (DirDriver): its nodes live in a sub-directory of
// the lock path (Dir), GetsTheLock sees every child of it, foreign ones
// included (AllChildren), and a node that does not hold waits on a
// children watch of the directory and lists it again at every change
// (WatchChildren): nothing is granted without a read then. The first
// listing, the one behind the create, sets no watch in this mode either, so
// a node that holds at once leaves no watch behind; a waiter lists once
// more with the watch. A look for another reason (WithChanged) keeps a
// pending children watch rather than arm another.
//
// A driver with work around each node (AttemptDriver) begins every attempt
// itself: Begin runs before the create and may take something the node
// depends on (Curator's V2 semaphore takes its gate mutex); the Attempt it
// returns may carry an Abort channel, a Check run once our node exists and
// before the first decision, and an End run once the attempt is decided:
// after the node holds, or after the node of a failed attempt was deleted.
// An attempt whose node is lost (gone, or of a dead session) or whose Abort
// closes starts over like any other: its node deleted, End called, and,
// under the client's retry policy, a new attempt begun. So the ownership
// checks, the re-creation and the clean-up are the loop's, for every
// recipe; Semaphore V2 is a driver like the mutex.
//
// # The driver contract
//
// Every call of a Driver is made on the goroutine of the Acquire that owns
// the node, one at a time; Layout once, by New. For each attempt (a new
// node): Begin (AttemptDriver), then Node once, before the create; then
// the Attempt's Check once; and End once when the attempt is decided. For
// each listing, Sequence is called for every child of the directory, then
// GetsTheLock once with the sorted participants up to and including our
// node (those behind it cannot change a decision, as new nodes only join
// behind; with AllChildren, every participant and the other children after
// them), and, when our node does not hold and it
// waits on nodes (not WatchChildren), once more with the same participants
// minus the node it named (the loop's check of HeldWhenGone and its way to
// find PP). GetsTheLock must therefore be a function of its arguments (and of
// state the driver's own Node set up for this attempt), and monotone: if
// our node holds with some nodes ahead, it holds with any subset of them. A
// driver may keep state between calls (rwlock's downgrade does), reset by
// Node. Verdict.HeldWhenGone claims that no node which would stop us can
// appear ahead of ours before Watch goes; the loop trusts the claim only
// together with its own check, so a wrong claim costs a grant without a
// read only when both agree.
//
// # Guarantees
//
// A failed or cancelled Acquire deletes its node before returning while
// the connection is up (within ctx, or one round trip and at most a second
// after ctx ended; see framework.Client.CleanupContext); while it is down,
// Acquire returns at ctx's deadline and a guaranteed delete keeps trying in
// the background. If ctx ends while the create itself is in flight, the
// node, if the server made it, is found by its protected name and deleted
// in the background as soon as that create completes. An Acquire that did
// not acquire never returns a nil error. Own nodes of a dead session are
// never waited on: the loop waits on the client's Session, and a node of a
// session that ended is deleted and made again, under the client's retry
// policy.
//
// # Connection loss and Close
//
// A Hold ends when the client's ErrorPolicy says a state is an error
// (Suspended and Lost under StandardPolicy, Lost under SessionPolicy): its
// Done channel closes, Err returns ErrLockLost, and its node is deleted as
// soon as the connection allows, so it blocks nobody once the session is
// back. Close ends every Hold first, with framework.ErrClosed. Holds are
// ended by the client's one registry (framework.Client.Guard), with no
// goroutine per hold.
//
// A recipe may give its holds a policy of their own (WithErrorPolicy, for
// leader.WithErrorPolicy): such a hold ends on the states that policy
// counts as errors, on the end of its node's session and on Close, watched
// by a state listener and a goroutine of its own.
//
// # Local hand-over
//
// With ReentrantHooks.LocalHandover, the Reentrant handles of one client on
// one lock (same path, same driver) form a cohort: one node waits in the
// ZooKeeper queue for all of them, acquired on a goroutine of the cohort
// whose context ends with the last local waiter, and a releasing holder
// hands the hold to the next local waiter with no request, at most
// LocalHandover times in a row; then the node is deleted and the waiters
// queue again. Local holders share the node's token unless PerHolderTokens
// (a rewrite of the node per local hand-over, whose zxid is the token). A
// loss of the node ends the local holder and fails every local waiter; a
// revocation of the node releases it instead of handing it over.
//
// # What is for recipes and what is a helper
//
// The recipe SPI: Driver, StandardDriver, DirDriver and Layout,
// AttemptDriver and Attempt, NodeSpec, Verdict; New and its Options;
// Loop (Acquire, TryAcquire, Participants); Hold and NewHold; Reentrant
// and ReentrantHooks; the errors. Helpers shared by the built-in recipes:
// Sequence, SortChildren, Before, Sleep, Revoke, RevokeMessage and
// WatchRevocation; WithKind and WithName name a recipe in the telemetry,
// and Instruments with WithInstruments lets a recipe that makes a Loop per
// acquire make its instruments once.
// docs/writing-a-recipe.md walks a new recipe through the SPI.
package locking
