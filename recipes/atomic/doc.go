// Package atomic provides distributed atomic counters and values on
// ZooKeeper, wire-compatible with Curator's DistributedAtomicLong,
// DistributedAtomicInteger and DistributedAtomicValue.
//
// # Long and Int
//
// Long and Int are aliases of the generic Number (Long = Number[int64],
// Int = Number[int32]), so their methods are documented once, on Number:
// go doc and pkg.go.dev list them under Number, and "go doc atomic.Long.Add"
// finds nothing; read "go doc atomic.Number.Add". A *Long has these
// methods (a *Int the same, with int32 for int64):
//
//	Long.Get(ctx) (int64, error)                            the value; 0 when the node is missing or empty
//	Long.Add(ctx, delta int64) (int64, error)               the value after; an error wrapping ErrNotApplied if not applied
//	Long.TryAdd(ctx, delta int64) (Result[int64], error)    Curator's add: the Result, Succeeded false if not applied
//	Long.Subtract(ctx, delta int64) (Result[int64], error)  Curator's subtract
//	Long.Increment(ctx) (Result[int64], error)              Curator's increment
//	Long.Decrement(ctx) (Result[int64], error)              Curator's decrement
//	Long.TrySet(ctx, v int64) (Result[int64], error)        Curator's trySet
//	Long.CompareAndSet(ctx, expected, v int64) (Result[int64], error)  Curator's compareAndSet, one try
//	Long.ForceSet(ctx, v int64) error                       Curator's forceSet: v, whatever the value was
//	Long.Initialize(ctx, v int64) (bool, error)             Curator's initialize: v if the node does not exist
//	Long.Path() string                                      the node's path
//	Long.Close(ctx) error                                   deletes the handle's writer child; the value stays
//
// # Znode layout
//
// The value lives in one PERSISTENT node at the handle's path, exactly as
// Curator stores it: a Long as 8 bytes big-endian, an Int as 4 bytes
// big-endian, a Value as its raw bytes. A missing node or empty data reads
// as 0; data shorter than the number is ErrMalformed (Curator's corruption
// error); bytes past the number are ignored, as Curator's ByteBuffer read
// ignores them, except that another kind's layout is refused with
// ErrLayoutMismatch: a Long finding 4 bytes (a DistributedAtomicInteger's
// or a SharedCount's value; also ErrMalformed), an Int finding 8 (a
// DistributedAtomicLong's, whose high half Curator would read as the int).
// An Int and a SharedCount share one layout and work together; a shared
// Value refuses a node a handle of this package writes (its writer
// children), and nothing here can tell a SharedValue's raw bytes. The node and its missing ancestors (as containers) are made
// by the first write that finds it missing. From its first write until its
// Close, a handle keeps one EPHEMERAL child "<path>/writer-<uuid>" (see
// Guarantees); Curator ignores it. Close deletes it (it would otherwise
// stay until the session ends, one per handle, and keep a plain delete of
// the node from succeeding), so close every handle when done with it,
// above all one made per call. With PromotedToLock,
// writers that give up optimism take Curator's InterProcessMutex at the
// lock path (recipes/mutex), so Go and Java promoted writers exclude each
// other.
//
// # Guarantees
//
// Every update is an optimistic read-modify-write: read the node and its
// version, compute the new value, write it only if the version is unchanged.
// A conflict is tried again under the handle's retry policy (WithRetryPolicy,
// the client's by default), then, with PromotedToLock, again under the lock
// (WithPromotedRetryPolicy). A Result says whether the update happened, the
// value before and after it, and the tries it took, as Curator's AtomicValue
// does; Long.Add and Int.Add return an error wrapping ErrNotApplied instead.
//
// An update is applied exactly once. Curator 5.4 retries a versioned
// setData whose reply was lost to a connection drop; the retry fails on the
// version its own first attempt moved, and the increment is made again:
// counted twice. Here every write is one transaction that also stamps the
// writer child with a number unique to that attempt, so after any failure
// the handle reads its stamp and knows whether the write went through.
// Writes of one handle run one at a time. Adds are combined: the adds that
// goroutines of one process make at once to one counter (through one
// handle or several of the same client, path and options) go out as one
// write of their sum, each caller told its own result, as if they had
// run one after another (see Number.TryAdd). A combined write is stamped
// and settled as any other, so its adds are applied once, together, or
// not at all; an add whose ctx ends while it waits in the queue is not
// sent. Sets and compare-and-sets are never combined.
//
// The child stays between updates: a write's stamp must outlive the write's
// reply, so deleting it after each update would cost a round trip per
// update. Close deletes it once, after the update in progress.
//
// A value node that takes no child is updated without one, as Curator
// updates it: one made by another client with an ACL that grants READ and
// WRITE but not CREATE (world:anyone:rw, say), or an ephemeral node. The
// first write that finds the child refused switches the handle to plain
// versioned sets, with an Info log. Those are still never applied twice:
// a set sent again after a lost reply and refused on the version is
// ErrUnknownOutcome (Curator 5.4 counts it twice), unless the node shows
// another writer's data at the version ours would have made. What is lost
// is only the certainty the stamp gave: with no reply lost, an update is
// exactly-once as before.
//
// # Connection loss
//
// Calls run under the client's retry policy and honour ctx, with one
// exception that keeps every answer true: a write in flight when ctx ends
// is waited for up to a second more, so that it is never applied after
// the call said it failed; if it was applied, the call succeeds. A write in
// flight when the session expires cannot be checked (its stamp went with
// the session): the call returns ErrUnknownOutcome rather than guess.
// Close while disconnected returns by its ctx, and the writer child's
// delete goes on in the background once the connection is back.
package atomic
