// Package console is the web console of gocurator ui: a live view of the
// recipes under one ZooKeeper path (locks, semaphores, elections, groups,
// services, counters, barriers, queues) as recipes, not as znodes.
//
// # Data flow
//
// One recipes/cache holds the tree under the root: one persistent
// recursive watch on ZooKeeper 3.6+ (one-shot watches on older servers),
// whatever the number of browsers. Each change marks the directories whose
// recipe it may alter (the node, its parent and grandparent: the classifier
// of cmd/internal/inspect reads two levels) and a single worker classifies
// them again from memory; the initial load and every resync classify the
// whole tree once. Pages and the JSON API read the published model, never
// ZooKeeper; browsers get each new view as server-sent events, an HTML
// fragment rendered once per change per view. The only reads of the servers
// besides the cache are the "cons" four-letter word (whose sessions are
// still connected), every few seconds, for all browsers at once.
//
// # Access
//
// Read-only and on loopback by default. Every console has an access token
// (generated unless given), carried in the URL gocurator ui prints: on a
// loopback address requests without it see everything but payloads (group
// members' data, service instances' JSON: they can hold secrets) and may
// not act; on any other address every request needs it. With
// AllowActions, token holders may revoke (ask a revocable holder to
// release) and break (delete) a participant's node, each behind a
// confirmation that names the node, each logged with the remote address.
package console
