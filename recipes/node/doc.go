// Package node keeps a znode in existence while a process lives: Apache
// Curator's PersistentNode (PersistentEphemeralNode by default, and
// PersistentTtlNode with WithTTL), without its wrong-owner window.
//
// A Node makes its node at Start and makes it again whenever it is lost:
// after its session expires, after someone deletes it, after a server
// restart. It is the base of group membership (recipes/group) and service
// registration.
//
// # Znode layout
//
// The node is at the given path, in the given mode (EPHEMERAL by default),
// with the given data; missing ancestors are made as containers unless
// NoParentCreation. With Protected the first create names the node
// "_c_<uuid>-<name>" (Curator's withProtection); a sequential node gets its
// number at the first create. Either way the node is made again under the
// name the first create gave it, not sequential any more, as Curator's
// PersistentNode does, so a protected sequential node stays one node
// (CURATOR-190) and Path never changes. A TTL node (WithTTL) is
// PERSISTENT_WITH_TTL with a child "touch", also PERSISTENT_WITH_TTL,
// touched at once and then every ttl/2. (Curator 5.4 makes the parent a
// container, which the server never deletes if the touch child was never
// made; a TTL parent is deleted ttl after its last write once childless, so
// a stopped TTL node is always reaped.) Go and Java processes see each
// other's nodes at the same paths.
//
// # Guarantees
//
// The Node never takes over a node it did not make in its live session
// (Curator's PersistentNode does: CURATOR-154). An ephemeral node found at
// the path is checked by its ephemeralOwner: one of the live session, made
// by a create whose reply was lost, is ours; one of a session of ours that
// has ended is waited out (its deletion is watched, then the node is made
// again); one of another session belongs to another process, or to this
// one before a restart: Start waits for it to go (the server deletes it
// when that session expires, if its process died), with a warning naming
// the owner, and it is never overwritten. FailIfOwned makes Start return
// ErrOwnedByOtherSession at once instead; TakeOver makes Start delete it,
// as Curator does, which is only safe if no other live process uses the
// path. So whenever Registered is true, the node exists and
// its ephemeralOwner is the live session. Persistent nodes have no owner:
// one found at the path is adopted and given our data, as Curator does.
//
// SetData may be called before Start (CURATOR-485) and the latest data is
// what every re-created node carries (CURATOR-241). Listen reports each
// state with its reason: Registered, Recreating because the session was
// lost (ErrSessionLost), the node deleted (ErrNodeDeleted) or the path
// held by another session (ErrOwnedByOtherSession), and Closed.
//
// The node is watched with one-shot data watches (GetWOrdered), the first
// set by a read sent beside the create, in its round trip: the deletion of
// a lost node is seen as it happens, and the node is made again one round
// trip later. Close deletes our node with one request, at our version,
// without reading its owner first while that watch has heard of nothing
// and the connection has stayed up (removeKnown says why that is as safe
// as the read); the delete fires the watch, so nothing is left to remove.
// A Start then Close costs 3 requests in 2 round trips (docs/node.md,
// Requests).
//
// # Connection loss
//
// A Node rides out disconnections: its session lives, and so does its
// node. When the session is lost (expired, or declared expired by the
// client) the Node reports Recreating at once, waits for a new session and
// for the old node to go, then makes it again. Close stops the Node and
// deletes its node (a TTL node with its touch child, unless
// ExpireAfterClose leaves it for the server to reap, as Curator does); if
// the connection is down the delete goes on in the background, for an
// ephemeral node only while its session lives. Closing the client stops
// the Node; a TTL node is then reaped by the server.
package node
