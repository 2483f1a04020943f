package semaphore

import "github.com/gocurator/curator/recipes/shared"

// Option configures a Semaphore.
type Option func(*options)

type options struct {
	// v2 selects Curator's InterProcessSemaphoreV2 layout (gate mutex in
	// "locks", leases in "leases"); false is the V1 layout, the lock loop
	// with max leases.
	v2 bool
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
// InterProcessSemaphoreV2, for paths shared with Java processes: a gate
// mutex at "<path>/locks" and lease nodes in "<path>/leases". Without it
// the semaphore uses the V1 layout (Curator's InterProcessSemaphore): lease
// nodes directly under the path, granted in order by the lock loop.
func CuratorV2() Option { return func(o *options) { o.v2 = true } }

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
