// Package oneshot serves framework's Watcher with one-shot watches, on
// servers without persistent watches (before ZooKeeper 3.6) or when the
// user asks for them (framework.OneShot): what Curator's NodeCache and
// TreeCache do. A one-shot watch misses what happens between its event
// and the next watch, so the events reported are not the watches' own:
// each read that sets a watch again is compared with the last (czxid,
// mzxid, pzxid) and what changed is reported, in the order a consumer
// can apply it.
//
// RunNode watches one node: an exists watch (creation, deletion, data)
// and, while the node exists, a children watch. RunTree watches a
// subtree: the root has an exists watch (it may be created), the nodes
// below it a data watch (GetW: none is left on a node that is gone), and
// every node that exists a children watch; a node that appears in its
// parent's listing is loaded (and reported created, with its subtree),
// one that leaves it is reported deleted (with its subtree). It costs two
// server watches per node where a persistent watch costs one per tree.
//
// # Permissions
//
// exists needs no permission, getData and getChildren need READ. A node
// the client may not read is watched by its exists watch alone, and its
// children are not (they cannot be listed): it is reported like any
// other node (created, data changed, deleted: what the exists watch and
// the stat show), and listed again after each of its events in case its
// permission changed. Waiting for the permission instead, as for a
// connection, would wait for ever and leave the node unwatched. Only the
// first arming of a Watch that is Strict (framework's Watch waiting for
// it) fails, with zk.ErrNoAuth, when the root itself cannot be listed.
//
// # Ending
//
// A run ends when its stop channel closes or its parent context ends. Its
// requests outlive that end by up to UnwatchTimeout, so that a request in
// flight completes and the watch it set is known; the watches still set
// are then removed (Client.Unwatch), since a one-shot watch stays on the
// server until it fires, and an exists watch on a missing node may never.
//
// The package knows nothing of framework: it reads through Client and
// reports through Watch.Emit, which framework's Watcher turns into its
// events and queues.
package oneshot
