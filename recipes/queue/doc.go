// Package queue provides distributed queues on ZooKeeper, wire-compatible
// with Curator's DistributedQueue, DistributedIdQueue,
// DistributedPriorityQueue, DistributedDelayQueue and
// SimpleDistributedQueue: Go and Java producers and consumers share one
// queue.
//
// A Queue's consumer is a function (Consume), and so are those of its
// variants (IDQueue, PriorityQueue, DelayQueue), which share its consumer
// and differ only in their item names; a Simple is pulled (Offer, Poll,
// Take, Peek). Items are bytes; encode them as you like on top.
// docs/queue.md says when a ZooKeeper queue is the right tool and when a
// log (Kafka) or a database table is.
//
// # Znode layout
//
// Queue (Curator's DistributedQueue, Curator 5.4 checked byte for byte):
//
//	<path>                      PERSISTENT, the client's default data; parents as containers
//	<path>/queue-<seq>          PERSISTENT_SEQUENTIAL, one per Put or PutMulti
//	<lockPath>/queue-<seq>      EPHEMERAL, the lock of an item being consumed (WithLockPath)
//	<parkPath>/queue-<seq>      PERSISTENT, a corrupt item moved aside (WithParkPath; ours only)
//
// The variants name their items so (Curator 5.4's names, checked against
// the jar), each followed by the sequence:
//
//	IDQueue        queue-|<id>|<seq>          '/' and '|' in the id as '_'; taken by sequence
//	PriorityQueue  queue-<s><8 hex><seq>      s is 1 for a priority >= 0, 0 below; the
//	                                          priority's 32 bits in upper-case hex, so
//	                                          names sort by priority, then sequence
//	DelayQueue     queue-|<ms hex>|<seq>      the time in ms since the epoch, at least 8
//	                                          upper-case hex digits; taken in time order,
//	                                          each once due
//
// An item a consumer requeues goes back under the name it was made with
// (its id, priority, time): Curator requeues a priority or delay item as a
// plain "queue-<seq>", which sorts before every other.
//
// An item node holds Curator's ItemSerializer framing, even for one item:
// the int32 version 0x00010001, then per item the byte 0x01, an int32
// length and the bytes, then the byte 0x02 (all big-endian). Items are
// taken in sequence order (wrap-aware); children not named "queue-<seq>"
// are passed by, as Curator passes them.
//
// Sharder (Curator's QueueSharder, Curator 5.4 checked against the jar):
//
//	<path>                      CONTAINER, parents as containers
//	<path>/queue-<UUID>         PERSISTENT, one Queue per shard (a random UUID);
//	                            every child of <path> is taken as a shard
//	<leaderPath>/_c_<uuid>-latch-<seq>  the sharders' election (LeaderLatch layout)
//
// Every started sharder lists the shards and counts their items each
// threshold check (and finds new shards at once, by a watch, where
// Curator's waits for its next check); the leader adds a shard when one
// holds WithNewQueueThreshold items or more, up to WithMaxQueues. Put
// picks a shard at random among those holding at most half the threshold
// (all shards when none does).
//
// Simple (Curator's SimpleDistributedQueue, ZooKeeper's own queue recipe):
// "<path>/qn-<seq>" PERSISTENT_SEQUENTIAL nodes holding the raw bytes, under
// a <path> made as a container; the lowest is taken by whoever deletes it
// first.
//
// # Guarantees
//
// The two modes of a Queue give different guarantees; pick by what losing
// or repeating an item costs:
//
//   - Without a lock path (Curator's default): at most once. A consumer
//     deletes the item node (versioned, so one consumer wins) and then
//     calls its function; a consumer that dies in between, or in the
//     function, loses the item. A function's error puts the items it did
//     not consume back at the tail (Requeue) or drops them (Delete).
//   - With a lock path (WithLockPath, Curator's lock-safety mode): at least
//     once. The consumer creates the item's EPHEMERAL lock node, calls its
//     function, and only then removes the item and its lock in one
//     transaction. If it dies, its lock goes with its session and another
//     consumer takes the item at once (Curator waits for the next put).
//     A consumer that lost its lock is told (Item.Done, Item.Err:
//     ErrItemLost). Fencing: the lock transaction also rewrites the item
//     node (same data), so the node's version names the lock's holder;
//     Item.CheckOp fails for any earlier holder, and Item.RemoveOps removes
//     the item in the consumer's own transaction. Work recorded in ZooKeeper
//     in one transaction with RemoveOps happens effectively once (CURATOR-605);
//     work recorded elsewhere is at least once. Curator's consumers do not
//     bump the version, so the fence holds among Go consumers; a Java
//     consumer taking an item after a Go one died is not fenced out.
//
// Items of one node (a PutMulti) are delivered in order; when a function
// fails on one, only that item and those after it are requeued (Curator
// requeues the whole node, so items consumed already come again). A node
// whose consumer died is delivered again whole.
//
// Put writes one node and returns once it exists; a create whose reply is
// lost with the connection may still have been applied, so a Put that
// failed that way may have queued its item (at least once, as Curator's).
// PutAsync and PutMultiAsync put in the background (Curator's default):
// accepted into a bounded buffer, written by one goroutine, several to a
// transaction, each its own node; Flush waits for them and returns their
// failures, WithPutListener hears every put, and Close writes what waits
// within its ctx and fails the rest with ErrClosed.
//
// An item the servers would refuse (over jute.maxbuffer,
// framework.WithJuteMaxBuffer) fails with ErrDataTooLarge and writes
// nothing. A node that does not decode (a wrong version word, a truncated
// frame, a foreign writer's bytes) is reported once per consumer
// (ErrCorruptItem) and left in the queue, or parked (WithParkPath); it never
// stops a consumer. Curator deletes such a node.
//
// A queue whose children listing passes the default jute.maxbuffer (some
// 50,000 items) is reported once (ErrBacklog): Curator's consumers cannot
// list it (their client refuses the reply) while ours keep consuming.
//
// Simple: Take and Poll read the head and delete it; the deleter has it.
// A Take's goroutines wait in line behind one watch per Simple, so one new
// item wakes one of them (Curator wakes every waiting take, which race for
// it).
//
// # Connection loss
//
// Every call runs under the client's retry policy and honours its ctx.
// Consume rides out disconnects and session expiry (CURATOR-623: Curator's
// consumers stop for good after an expiry): it reads the queue again after
// every reconnection and new session, on framework.Watch. It takes no new
// item while the client is Suspended or Lost, and tells its caller of each
// state (WithConnectionStates; CURATOR-336). In lock-safety mode an item
// being consumed ends (Item.Done) when the client's ErrorPolicy counts a
// state as an error; its lock node goes with the session, or is deleted by
// the consumer if the session survived. Close and the end of Consume's ctx
// leave the item being consumed to its next consumer (without a lock path,
// by putting back at the tail what the function did not consume), and no
// lock node, watch or goroutine behind.
package queue
