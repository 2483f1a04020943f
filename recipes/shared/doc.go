// Package shared provides values many processes read and change on
// ZooKeeper, wire-compatible with Curator's SharedValue (Value, any bytes)
// and SharedCount (Count, an integer, such as the maximum of a semaphore:
// see semaphore.WithMaxLeasesFrom).
//
// # Znode layout
//
// One PERSISTENT node at the value's path holds the value: a Value's bytes
// as they are, a Count's integer as a 4-byte big-endian signed int, exactly
// as Curator's SharedValue and SharedCount write them; missing ancestors
// are created as containers. The node is created with the seed by the first
// Start, Get or Set that finds it missing. Go and Java processes read and
// write the same value.
//
// Another recipe's layout on the path is refused with ErrLayoutMismatch by
// every read (Start, Get, GetVersioned; the watch keeps the last value and
// logs it): for a Value, a node an atomic handle writes (recipes/atomic
// keeps "writer-<uuid>" children under it; a Value's unconditional Set
// would overwrite the counter); for a Count, 8 bytes (a
// DistributedAtomicLong's value, whose high half Curator's SharedCount
// would read as the count). A Count and an atomic Int share one layout (4
// bytes big-endian) and work together. Not detectable: a Curator
// DistributedAtomicValue or Long with no Go handle on it (no children: its
// bytes are a Value's). Set writes without reading, as Curator's does, and
// so refuses nothing: read first.
//
// # Guarantees
//
// A Count is a Value whose bytes are its integer: everything below holds
// for both, and a Count's reads refuse data that is not a count
// (ErrMalformed), which its cache never takes.
//
// Get and GetVersioned read ZooKeeper. Set writes unconditionally; TrySet
// writes only if the node is still at the version the caller read (a
// compare-and-set), and reports false instead of overwriting a newer value.
// After Start, a watch (framework.Watch: one persistent watch on the node)
// keeps a cached copy current: Cached (a Count's Value), Versioned, Watch
// and Listen read it. The cache only moves forward (by node incarnation,
// then data version), so listeners see values in order; since each change
// is read after its event, a burst of writes may be seen as its last value
// only.
//
// # Connection loss
//
// Calls retry under the client's retry policy and honour ctx. The watch
// survives disconnects and session loss: after every reconnection (its
// WatchResync) it reads the node again, and a read that fails because
// retries ran out during a long partition is tried again, so the cache
// catches up with every change made meanwhile. A deleted node keeps the
// last value until the node is made again. Close stops the watch (and
// removes it from the server) and the listeners; closing the client stops
// the watch.
package shared
