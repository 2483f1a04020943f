package semaphore

import "github.com/gocurator/curator/recipes/shared"

// Option configures a Semaphore.
type Option func(*options)

type options struct {
	// v1 selects the V1 layout (Curator's deprecated InterProcessSemaphore:
	// the lock loop with max leases, nodes directly under the path); false,
	// the default, is Curator's InterProcessSemaphoreV2 layout (gate mutex
	// in "locks", leases in "leases"), what a port of current Curator code
	// shares its paths with.
	v1 bool
	// data is written into lease nodes; nil means the client's default
	// data (the local IP, as Curator writes).
	data []byte
	// count, when set, gives the maximum instead of New's maxLeases.
	count *shared.Count
	// countSet records that WithMaxLeasesFrom was given, even with nil.
	countSet bool
	// telemetryName is WithTelemetryName's, "" for the semaphore path.
	telemetryName string
}

// CuratorV2 selects the layout and protocol of Curator's
// InterProcessSemaphoreV2: a gate mutex at "<path>/locks" and lease nodes
// in "<path>/leases". It is the default; the option stays so that code
// written when V1 was the default keeps its meaning (it undoes an earlier
// CuratorV1: the last layout option wins).
func CuratorV2() Option { return func(o *options) { o.v1 = false } }

// CuratorV1 selects the V1 layout, Curator's deprecated
// InterProcessSemaphore: lease nodes "_c_<uuid>-lock-<seq>" directly under
// the path, granted in order by the lock loop (FIFO; a release wakes only
// the waiter it lets in). Use it only for paths shared with Java processes
// that still use InterProcessSemaphore, or with this library's semaphores
// from before V2 became the default. Each participant also keeps a node in
// "<path>/leases" while it waits or holds, which V2 semaphores (Curator's
// and ours) count as a lease, so that a V2 semaphore that comes later
// never admits more than the maximum beside V1 holders (see
// ErrLayoutMismatch).
func CuratorV1() Option { return func(o *options) { o.v1 = true } }

// WithData sets the data of lease nodes (default: the client's default
// data, the local IP, as Curator writes).
func WithData(data []byte) Option {
	return func(o *options) { o.data = append([]byte{}, data...) }
}

// WithMaxLeasesFrom takes the maximum from a shared count (Curator's
// SharedCountReader constructor) instead of New's maxLeases, which is then
// ignored. The count is started by the first acquire if it is not started
// yet; closing it stays its owner's job, and a closed count fails acquires.
// Raising the count wakes waiters that now fit; lowering it admits nobody
// new until enough leases are returned (leases held are kept). A count
// below 1 admits nobody.
func WithMaxLeasesFrom(c *shared.Count) Option {
	return func(o *options) { o.count, o.countSet = c, true }
}

// WithTelemetryName sets the name under which the semaphore's metrics and spans
// are recorded (the curator.lock.name attribute; default: the lock path).
// Give locks whose paths are made per entity (/locks/order-1234) one name
// shared by all of them, such as "orders": every distinct name is a series
// of each metric. In the V2 layout the gate mutex is recorded as name +
// "/locks".
func WithTelemetryName(name string) Option { return func(o *options) { o.telemetryName = name } }
