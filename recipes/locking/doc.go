// Package locking is the one lock loop every lock recipe runs on, Curator's
// LockInternals done once: a recipe is a Driver that says how its node is
// named and when a node holds the lock; the loop does the rest (protected
// create, listing, watches, ownership checks, clean-up, loss detection).
//
// # The loop
//
// Acquire creates a protected node and sends the listing of its directory
// right behind the create (one round trip when uncontended). A node that
// does not hold waits in one of two modes: on at most three nodes (P, the
// node the driver names; PP, the node it would name if P were gone; and its
// own), granting on P's deletion with no request when that is sound
// (Verdict.HeldWhenGone and the loop's own check); or, with the layout's
// WatchChildren, on a children watch of the directory, reading before
// every grant. Why each step is sound, the round trips it costs and what a
// failure leaves behind are in docs/design.md ("The one loop",
// "HeldWhenGone", "Nothing left behind"): that is the one description of
// the loop's design; this package documents its contract.
//
// # The driver contract
//
// Every call of a Driver is made on the goroutine of the Acquire that owns
// the node, one at a time; Layout once, by New. For each attempt (a new
// node): Begin (AttemptDriver), then Node once, before the create; then
// the loop's layout refusal (RefusingLayouts) and then the Attempt's Check
// once, with the listing that came with the create; and End once when the
// attempt is decided. The Attempt's Nodes are deleted with a failed
// attempt's node, and by the Hold after its own node. For each listing, Sequence is
// called for every child of the directory, then GetsTheLock once with the
// sorted participants up to and including our node (those behind it cannot
// change a decision, as new nodes only join behind; with AllChildren, every
// participant and the other children after them) and the limit taken before
// the listing (WithLimit), and, when our node does not hold and it waits on
// nodes (not WatchChildren), once more with the same participants minus the
// node it named (the loop's check of HeldWhenGone and its way to find PP).
// GetsTheLock must therefore be a function of its input (and of state the
// driver's own Node set up for this attempt), and monotone: if our node
// holds with some nodes ahead, it holds with any subset of them. A driver
// may keep state between calls (rwlock's downgrade does), reset by Node;
// state of one acquire belongs in its Attempt, as a Loop is used by many
// acquires at once. Verdict.HeldWhenGone claims that no node which would
// stop us can appear ahead of ours before Watch goes; the loop trusts the
// claim only together with its own check, and only while the limit's
// change channel has not closed since the look.
//
// # Guarantees
//
// A failed or cancelled Acquire deletes its node before returning while
// the connection is up; while it is down, Acquire returns at ctx's deadline
// and a guaranteed delete keeps trying in the background. An Acquire that
// did not acquire never returns a nil error. Own nodes of a dead session
// are never waited on: a node of a session that ended is deleted and made
// again, under the client's retry policy (unless WithOneSession).
//
// # Connection loss and Close
//
// A Hold ends when the client's ErrorPolicy (or WithErrorPolicy's) says a
// state is an error, when its node's session ends, and on the client's
// Close: its Done channel closes, Err says why (ErrLockLost,
// framework.ErrClosed), and its node is deleted as soon as the connection
// allows. Holds under the client's policy are ended by the client's one
// registry (framework.Client.Guard), with no goroutine per hold.
//
// # What is for recipes and what is a helper
//
// The SPI a recipe author needs: Driver, Listing, Verdict and NodeSpec;
// StandardDriver (the mutex's rule, for reuse); DirDriver and Layout;
// AttemptDriver and Attempt; New and its Options (WithLimit, WithLogger,
// WithErrorPolicy, WithOneSession, WithInvalid, RefusingLayouts, and
// WithKind and WithName for the telemetry); Foreign, the layouts of
// Curator's recipes (MutexLayout, ReadWriteLayout, LatchLayout,
// SemaphoreV2Layout) and CheckForeign, one check of another recipe's
// layout on a path for every recipe (framework.ErrLayoutMismatch); Loop (Acquire, TryAcquire, Participants, and Path,
// Client and Err for the handle built on it); Hold; ErrNotHeld,
// ErrLockLost and ErrWouldBlock. Helpers for drivers and the built-in
// recipes: Sequence, SortChildren and Before (sequence numbers),
// RevokeMessage and WatchRevocation (Curator's revocation), ScopeName (the
// telemetry's scope). The reentrant handle of the mutex and the read/write
// lock, with its local hand-over (a cohort of handles sharing one node), is
// built on this SPI in recipes/internal/reentrant. docs/writing-a-recipe.md
// walks a new recipe through the SPI.
package locking
