// Package cache keeps a znode, its children or its whole subtree in
// memory, current with the server, as Curator's CuratorCache, TreeCache,
// PathChildrenCache and NodeCache do, built on framework.Watch.
//
// # Modes
//
// New(c, path) caches path and its whole subtree (CuratorCache,
// TreeCache); WithMaxDepth(1) the node and its children
// (PathChildrenCache); SingleNode() the node alone (NodeCache).
// WithFilter leaves subtrees out (TreeCacheSelector), StatsOnly keeps no
// data, CompressedData gunzips data written with Curator's
// GzipCompressionProvider.
//
// # Watches
//
// On ZooKeeper 3.6 and later the cache holds one persistent recursive
// watch on the server (a persistent watch of the node for SingleNode);
// on older servers, or with OneShotWatches, one-shot watches, two per
// node, as TreeCache holds them. The events are the same either way.
//
// # Guarantees
//
// Start returns once the initial load is done. Every event of the watch
// makes the cache read the path again, so the cache never trusts an
// event's type (the watch coalesces under load) and converges on the
// server's state: a change is detected by czxid (a new incarnation) and
// mzxid (new data), never by version, so a node deleted and made again
// while the client was away is seen (CURATOR-391). Loads read with a
// bounded number of requests in flight (WithReadsInFlight), so large
// trees and parents with 70,000 children load whole (CURATOR-690), and a
// child deleted between its parent's listing and its own read is simply
// not cached (CURATOR-476). The reads that changes cause are pipelined
// too, one per path at a time, and reads of several paths run alone, so
// that no read is applied after a later one of the same path. The server
// answers one session's requests one after another, which bounds a load
// over one session: a load that finds more than 1,000 nodes opens up to
// 3 more sessions for the rest of it and closes them after (within a
// budget of 8 in the process, logged at Info), and WithLoadSessions sets
// the number instead (docs/cache.md has the figures). Synced is a
// read-your-writes barrier: after it returns, the cache holds every
// change the server had committed when it was called.
//
// Listeners (Listen) get Created, Changed and Deleted events in the
// order the cache applied them (parents created before their children,
// subtrees deleted deepest first), Initialized once after the initial
// load, and Resynced after each reconnection once the cache matches the
// server again (CURATOR-296). Each listener runs on its own goroutine; a
// slow one gets each path's outcome rather than every step (see
// Event.Coalesced), so it never blocks the cache and its queue is bounded
// by the number of paths.
//
// # Connection loss
//
// Changes made while the client is disconnected are not reported by the
// server; after every reconnection and every new session the cache reads
// the whole tree again, reports what changed, then Resynced. Start waits
// for the server while it is down (until ctx ends). Nodes the client may
// not read are reported (Unreadable) and not cached. Close removes the
// watch from the server and stops every goroutine and listener;
// closing the client stops the cache too. docs/cache.md compares the
// cache with Curator's, event by event.
package cache
