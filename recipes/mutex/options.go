package mutex

import (
	"fmt"

	"github.com/gocurator/curator/framework"
)

// Option configures a Mutex.
type Option func(*options)

type options struct {
	// data is written into the lock node; nil means the client's default
	// data (Curator's behaviour).
	data []byte
	// revoked is called when another process asks the holder to release
	// (see Revoke); nil means the mutex is not revocable.
	revoked func(*Mutex)
	// localHandover is WithLocalHandover's max, 0 for none.
	localHandover int
	// perHolderTokens is WithPerHolderTokens.
	perHolderTokens bool
	// telemetryName is WithTelemetryName's, "" for the lock path.
	telemetryName string
	err           error // the first invalid option's
}

// WithData sets the data of the lock node (default: the client's default
// data, the local IP).
func WithData(data []byte) Option {
	return func(o *options) { o.data = append([]byte{}, data...) }
}

// Revocable makes the mutex revocable, like Curator's makeRevocable: while
// it holds the lock, a Revoke of its node calls fn (on a goroutine of its
// own), which should Release soon. Nodes of a revocable mutex carry empty
// data, as in Curator, so WithData beside it is refused
// (framework.ErrInvalidOption).
func Revocable(fn func(m *Mutex)) Option {
	return func(o *options) { o.revoked = fn }
}

// WithLocalHandover makes the handles of one client on one path share one
// ZooKeeper node (lock cohorting): the first local waiter's node waits in
// the ZooKeeper queue for all of them, and a local holder's Release hands
// the hold to the next local waiter with no ZooKeeper request, at most max
// times in a row; then the local waiters queue again behind the other
// processes with a fresh node, created in one transaction with the old
// node's delete (one round trip for the next holder elsewhere). A waiter
// in another process is overtaken by at most max local hand-overs, so it waits at
// most (max+1) local hold times per process ahead of it (see
// docs/mutex.md#local-hand-over). Local holders share their node's fencing
// token; every holder in another process gets a greater one. max must be
// at least 1 (ErrInvalidOption otherwise); handles of one path should use
// the same max (the value of the first one to wait applies).
func WithLocalHandover(max int) Option {
	return func(o *options) {
		if max < 1 {
			o.err = fmt.Errorf("%w: WithLocalHandover(%d): max must be at least 1", framework.ErrInvalidOption, max)
			return
		}
		o.localHandover = max
	}
}

// WithPerHolderTokens, with WithLocalHandover, gives every local holder a
// fencing token of its own instead of sharing its node's: a local hand-over
// then writes the node once (one round trip, on the critical path; the data
// is unchanged, its version grows) and the new holder's FencingToken is
// that write's zxid, strictly greater than every earlier holder's, local
// or in another process. CheckOp and FencedMulti check the node's version,
// so the server also rejects a fenced write of an earlier local holder. The
// cost is the round trip per local hand-over that the option otherwise
// saves (see docs/mutex.md#local-hand-over). Without WithLocalHandover it
// does nothing.
func WithPerHolderTokens() Option {
	return func(o *options) { o.perHolderTokens = true }
}

// WithTelemetryName sets the name under which the mutex's metrics and spans
// are recorded (the curator.lock.name attribute; default: the lock path).
// Give locks whose paths are made per entity (/locks/order-1234) one name
// shared by all of them, such as "orders": every distinct name is a series
// of each metric.
func WithTelemetryName(name string) Option { return func(o *options) { o.telemetryName = name } }
