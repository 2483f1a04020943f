package zkconn

import (
	"sync/atomic"
	"time"
)

// Hooks for the client's tests, which look at what went over the wire.
// Nothing else sets them.

// recordOps makes every connection keep the opcodes it writes (Conn.ops),
// for tests of what is sent in which order.
var recordOps atomic.Bool

// ignoreReplies makes Take find nothing, as when a frame was not
// understood: a test's way to run the fallback (the Stat read with a
// request) against a real server.
var ignoreReplies atomic.Bool

// Opcodes WrittenOps lists besides the requests' own.
const (
	// OpReplyReleased marks a reply held back until the watches were
	// set again and then handed on.
	OpReplyReleased = -1000
	// OpReplyEarly marks a reply to a request handed on before
	// go-zookeeper set the watches again: what the gate prevents.
	OpReplyEarly = -1001
	// OpReplySettled marks a reply held back in the settle window, after
	// a reply that gave go-zookeeper a watch on a connection that had
	// none to set again, and then handed on.
	OpReplySettled = -1002
)

// RecordOps turns on (or off) the log of opcodes written, which
// WrittenOps returns. For tests.
func RecordOps(on bool) { recordOps.Store(on) }

// IgnoreCreateReplies makes Take find nothing, as when a frame was not
// understood. For tests.
func IgnoreCreateReplies(on bool) { ignoreReplies.Store(on) }

// WrittenOps returns the opcodes written on the live connection so far,
// with OpReplyReleased and OpReplyEarly where they happened, while
// RecordOps is on. For tests.
func (w *Wire) WrittenOps() []int32 {
	live := w.Live()
	if live == nil {
		return nil
	}
	live.sentMu.Lock()
	defer live.sentMu.Unlock()
	return append([]int32(nil), live.ops...)
}

// LastPing returns the send time of the last ping of the client's own
// (Keepalive), zero until one. For tests.
func (w *Wire) LastPing() time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.lastPing
}

// Outstanding returns how many creates the Wire still keeps something
// of (asked for, in flight or answered and not taken). For tests.
func (w *Wire) Outstanding() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.want) + len(w.got) + len(w.pending)
}
