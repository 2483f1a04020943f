package oneshot

import (
	"context"
	"iter"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
)

// Kind names a one-shot watch, for Client.Unwatch.
type Kind int

// The kinds of one-shot watch.
const (
	DataWatch  Kind = iota + 1 // set by GetW
	ExistWatch                 // set by ExistsW
	ChildWatch                 // set by ChildrenW
)

// Client is what a run asks of the client: reads that set one-shot watches
// (paths as the caller names them), their removal, and the connection's
// state changes.
type Client interface {
	Exists(ctx context.Context, path string) (*zk.Stat, error)
	ExistsW(ctx context.Context, path string) (*zk.Stat, <-chan zk.Event, error)
	GetW(ctx context.Context, path string) ([]byte, *zk.Stat, <-chan zk.Event, error)
	ChildrenW(ctx context.Context, path string) ([]string, *zk.Stat, <-chan zk.Event, error)
	// Unwatch removes the client's one-shot watch of kind on path.
	Unwatch(ctx context.Context, path string, kind Kind) error
	// StateChanged returns a channel closed at the next state change: a
	// failed read is tried again then.
	StateChanged() <-chan struct{}
	// Closed reports whether the client has closed: nothing is left to
	// remove then.
	Closed() bool
}

// EventType is what a run saw happen to a path.
type EventType int

// The event types.
const (
	Created EventType = iota + 1
	Deleted
	DataChanged
	ChildrenChanged // RunNode only
)

// Event is one change seen.
type Event struct {
	Type EventType
	Path string
	// Zxid is the transaction that made the change, from the stat read:
	// czxid for Created, mzxid for DataChanged, pzxid for
	// ChildrenChanged, 0 for Deleted.
	Zxid int64
}

// Watch is what a run watches and where it reports.
type Watch struct {
	Client Client
	// Path is the node, or the subtree's root, as the client names it.
	Path string
	// Strict is set when the caller waits for the first arming: a root
	// the client may not list then ends the run, through Refused.
	Strict bool
	// Emit reports a change. It is called on the run's goroutine and must
	// not block.
	Emit func(Event)
	// Armed is called once the watches are first set. It may be nil.
	Armed func()
	// Refused is called with zk.ErrNoAuth when a Strict run ends because
	// its root cannot be listed. It may be nil.
	Refused func(error)
}

// UnwatchTimeout bounds the removal of a run's one-shot watches when it
// ends, and how long its last requests may outlive the end.
const UnwatchTimeout = 5 * time.Second

// armed returns w.Armed made idempotent.
func (w Watch) armed() func() {
	if w.Armed == nil {
		return func() {}
	}
	return sync.OnceFunc(w.Armed)
}

func (w Watch) refused(err error) {
	if w.Refused != nil {
		w.Refused(err)
	}
}

// runContext returns the context of a run's requests and a channel closed
// when the run is to end (stop closed or parent ended). The context
// outlives the end by up to UnwatchTimeout (or until parent ends, or
// cancel): a request in flight then completes, so that the watch it set
// is known and given back, rather than being abandoned half-way with its
// watch set.
func runContext(parent context.Context, stop <-chan struct{}) (context.Context, <-chan struct{}, context.CancelFunc) {
	ctx, cancel := context.WithCancel(parent)
	end := make(chan struct{})
	go func() {
		select {
		case <-stop:
		case <-ctx.Done():
		}
		close(end)
		t := time.NewTimer(UnwatchTimeout)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
		}
		cancel()
	}()
	return ctx, end, cancel
}

// pause waits for a state change before trying again, false if the run
// is to end.
func pause(end <-chan struct{}, changed <-chan struct{}) bool {
	select {
	case <-changed:
		return true
	case <-end:
		return false
	}
}

func ended(end <-chan struct{}) bool {
	select {
	case <-end:
		return true
	default:
		return false
	}
}

// giveBack removes the watches still set, unless the client has closed.
func giveBack(c Client, watches iter.Seq2[string, Kind]) {
	if c.Closed() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), UnwatchTimeout)
	defer cancel()
	for path, kind := range watches {
		_ = c.Unwatch(ctx, path, kind)
	}
}
