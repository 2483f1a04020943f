// Package group provides group membership on ZooKeeper, wire-compatible with
// Apache Curator's GroupMember: each member keeps an ephemeral node named by
// its id under the group's path, and every member sees the others.
//
// # Znode layout
//
// A member is the EPHEMERAL node <path>/<id> with its payload as data (the
// client's default data, its local address, when the payload is nil, as
// Curator's GroupMember defaults to), kept by a recipes/node Node; the
// group's path and missing ancestors are made as containers. Go and Java
// members of one group see each other's ids and payloads.
//
// # Guarantees
//
// The member node has the guarantees of recipes/node: it is made again
// after its session expires or someone deletes it, and it is never taken
// over from another session: a second member with the same id waits in
// Start for the first's node to go (a member restarted before its old
// session expired joins once it has; FailIfOwned fails at once with
// node.ErrOwnedByOtherSession instead), where Curator's GroupMember would
// share one node between two processes (CURATOR-154; TakeOver deletes the
// other's node, as Curator's restart would). Node gives the member's Node, whose Listen reports each
// state with its reason.
//
// Members reads a cache of the group (recipes/cache, the group's path and
// its children, on one persistent watch), which Start loads before it makes
// the member's node. As in Curator, Members always lists this member, with
// its payload, even while its node is being made again. Listen reports
// members joining, leaving and changing their payloads, which Curator's
// GroupMember does not offer.
//
// # Connection loss
//
// While the client is disconnected the cache keeps the members it last saw;
// after a reconnection it reads the group again and reports what changed
// meanwhile. Close deletes the member's node and stops the cache; closing
// the client stops both.
package group
