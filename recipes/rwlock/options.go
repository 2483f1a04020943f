package rwlock

import (
	"fmt"

	"github.com/gocurator/curator/framework"
)

// Option configures an RWLock.
type Option func(*options)

type options struct {
	// data is written into the read and write nodes; nil means the
	// client's default data (Curator's behaviour).
	data []byte
	// localHandover is WithLocalHandover's max, 0 for none.
	localHandover int
	// telemetryName is WithTelemetryName's, "" for the lock path.
	telemetryName string
	err           error // the first invalid option's
}

// WithData sets the data of the lock nodes, read and write alike (default:
// the client's default data, the local IP), like the lockData argument of
// Curator's InterProcessReadWriteLock.
func WithData(data []byte) Option {
	return func(o *options) { o.data = append([]byte{}, data...) }
}

// WithLocalHandover gives the write lock the mutex's local hand-over (see
// mutex.WithLocalHandover): the write locks of the RWLocks of one client on
// one path share one write node and pass it among themselves with no
// ZooKeeper request, at most max times in a row, before the node is
// deleted and readers and writers of other processes queued behind it get
// their turn. A write holder whose RWLock holds its read lock too
// (downgraded) releases the node instead of handing it over. Read locks are
// not affected: readers do not exclude each other. max must be at least 1
// (framework.ErrInvalidOption otherwise).
func WithLocalHandover(max int) Option {
	return func(o *options) {
		if max < 1 {
			o.err = fmt.Errorf("%w: WithLocalHandover(%d): max must be at least 1", framework.ErrInvalidOption, max)
			return
		}
		o.localHandover = max
	}
}

// WithTelemetryName sets the name under which the read/write lock (both locks)'s metrics and spans
// are recorded (the curator.lock.name attribute; default: the lock path).
// Give locks whose paths are made per entity (/locks/order-1234) one name
// shared by all of them, such as "orders": every distinct name is a series
// of each metric.
func WithTelemetryName(name string) Option { return func(o *options) { o.telemetryName = name } }
