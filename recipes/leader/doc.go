// Package leader provides leader election on ZooKeeper, wire-compatible
// with Curator's LeaderLatch and LeaderSelector, on the shared lock loop
// (recipes/locking).
//
// # Znode layout
//
// Latch layout (the default, Curator's LeaderLatch): every candidate
// creates "<path>/_c_<uuid>-latch-<seq>", EPHEMERAL_SEQUENTIAL, protected,
// parents created as containers, with the participant id as data (UTF-8;
// an empty id gives empty data). Selector layout (SelectorLayout,
// Curator's LeaderSelector): the leader is the holder of an
// InterProcessMutex on the path, nodes "<path>/_c_<uuid>-lock-<seq>" with
// the id as data (the client's default data for an empty id). In both the
// leader is the candidate whose node is first in sequence order; the others
// wait for their immediate predecessor. Both layouts are
// locking.StandardDriver on the lock loop (its design: docs/design.md, "The
// one loop"): one protected create, one round trip per hand-over, no herd,
// nothing left behind by a failed campaign.
//
// The two layouts ignore each other's nodes, so on one path each would
// elect a leader of its own. An election refuses a path that holds the
// other layout's nodes (or a read/write lock's, or a semaphore's leases)
// with ErrLayoutMismatch (Campaign, after a look
// behind its own create, so that of two candidates of different layouts
// the later one refuses; Run, Start's Latch, Leader and Participants), and
// a refused Campaign leaves no node. Curator does not look: a Java
// candidate that arrives second is not refused.
//
// # Guarantees
//
// At most one Term is live at a time across all participants, as long as
// each participant's clock-free view holds: a candidate leads only while
// its node is first and belongs to its client's live session (the check
// Curator's LeaderLatch lacks before 5.7, CURATOR-696). A Term's Token (the
// czxid of its node) is strictly greater than every earlier term's, and its
// CheckOp (or FencedMulti) makes ZooKeeper refuse a write once the term's
// node is gone, which it is before any later term begins.
//
// Campaign never returns a nil Term with a nil error, and never a Term of
// a session that ended while it waited (etcd#19597): a candidacy lives in
// one session and fails with ErrSessionLost when it ends. A failed or
// cancelled Campaign leaves no node (deleted before it returns while
// connected, by a guaranteed delete in the background otherwise).
//
// # Connection loss: the policy trade-off
//
// Under connstate.StandardPolicy (the default) a term ends on Suspended:
// the leader stops as soon as its connection drops, before its session can
// expire on the server and another candidate can lead, so two leaders
// never act at once; the price is a new election after every connection
// blip. Under connstate.SessionPolicy (framework.WithErrorPolicy, or
// WithErrorPolicy for one election) a term ends only on Lost: blips cost
// nothing, but a partitioned leader learns it is deposed only when its
// client declares the session expired, which can be after the server
// expired it and another candidate began to lead; fence writes with the
// Token or CheckOp under that policy.
//
// A term also ends when its node is deleted by someone else (it watches
// its node) and when the client closes; Err says which. A term, Run's
// function's context and Term.Context judge the session by the clock as
// well as by the client's events: after a process pause past the session's
// deadline, the first look at any of them says the term ended, before any
// goroutine has run (docs/leader.md, "Contexts after a pause"). Candidates whose
// node is deleted while they wait make a new one, even if the election's
// path was deleted recursively (CURATOR-724).
package leader
