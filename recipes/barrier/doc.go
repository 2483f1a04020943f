// Package barrier provides distributed barriers on ZooKeeper,
// wire-compatible with Curator's DistributedBarrier and
// DistributedDoubleBarrier.
//
// # Znode layout
//
// Barrier: the node at the path exists while the barrier is closed (data:
// the client's default data, parents created as containers); Wait returns
// once it is gone. Double: each member that enters owns an EPHEMERAL child
// "<path>/<uuid>" (a random lower-case UUID, as Curator names it) and the
// member that finds n members makes the PERSISTENT child "<path>/ready";
// the path is created as a container. Go and Java members share a barrier.
//
// A Barrier refuses a double barrier's layout at its path (children named
// "ready" or by a UUID) with ErrLayoutMismatch. The other way round cannot
// be seen: a plain barrier's node has no children, as the path of a double
// barrier nobody has entered, so a Double entered on a closed plain
// barrier's node joins it (and the Barrier refuses from then on). Keep the
// two kinds on separate paths.
//
// # Guarantees
//
// Enter returns nil only once n members are present, and it counts them
// again after every wake-up, whatever woke it (Curator GH-1290 lets one
// member through alone after a spurious wake-up or a reconnection). The
// member that finds n members makes "ready" in one transaction that checks
// every member it counted still exists, and a member that gives up (its ctx
// ended) deletes its node in one transaction that fails if "ready" appeared
// meanwhile; so a member that gave up was not counted, leaves no node for a
// late member to count (CURATOR-318, CURATOR-233), and when the barrier
// opens at the moment a member's deadline passes, that member's Enter
// returns nil: the members of one round agree. More than n members may
// enter; "ready" is not counted as a member.
//
// The round rule: a "ready" node opens the barrier only for members whose
// node is older than it (by czxid). A "ready" left by an earlier round whose
// members never left (they crashed, or only ever entered) does not let the
// next round through, where Curator lets a lone member pass; the member that
// finds n members replaces it. Leave uses the same rule: its round is the
// members made before the ready node that let it in, so a member that enters
// the next round at once (even under the handle's old name) is neither
// waited for nor has its ready node deleted. Members of one round should
// still not enter the next one before they have left this one: an early
// entrant counts the members of this round that have not left yet.
//
// Leave follows Curator's protocol (the lowest member waits for the highest
// to go, the others delete their node and wait for the lowest) on watches
// of one node at a time, separate from Enter's: neither wakes the other.
// Unlike Curator's, it reads its round again after every wake-up and
// returns only when nobody of the round is left: a reconnection or a new
// session never lets a member out while the lowest is still in.
// A Leave whose ctx ends returns its error without spinning (CURATOR-536),
// and still leaves: its node is deleted.
//
// # Connection loss
//
// Calls run under the client's retry policy and honour ctx; waits survive
// disconnects (a reconnection makes the wait count again). A member whose
// node vanished while it waited to enter (its session expired) fails with
// ErrMemberLost. An entered member holds its place like a lock's hold
// (docs/handles.md): Done closes and Err wraps ErrMemberLost when the
// client's ErrorPolicy counts a state as an error or the session ends, and
// its node is then deleted, so the others neither count it nor wait for it;
// Close ends it with framework.ErrClosed. Nothing is left behind by a failed Enter: its node is
// deleted before it returns while connected, by a guaranteed delete in the
// background otherwise.
package barrier
