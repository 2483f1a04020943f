package zkconn

import (
	"sync"
	"time"
)

// ledger is a connection's account of its requests: those written and
// not yet answered, in order (ZooKeeper answers a session's requests in
// the order they were sent), which the acknowledgement clock reads; the
// client's own requests waiting for their replies; and, while recordOps
// is on, the opcodes written (tests). go-zookeeper's send and receive
// goroutines and the client's own writes use it at once: it has a lock of
// its own.
type ledger struct {
	mu      sync.Mutex
	sent    []sentRequest
	waiters map[int32]ownRequest // injected requests, by xid, until their replies come
	ops     []int32
}

// sentRequest is a request on its way: its xid and when it was written.
// The connect request has no xid; connectXid stands for it.
type sentRequest struct {
	xid int32
	at  time.Time
}

// ownRequest is an injected request waiting for its reply.
type ownRequest struct {
	op    int32
	reply chan int32 // the reply's error code; closed without one if the connection ends
	then  func(code int32, zxid int64)
}

// written records a request of xid sent at at; op is its opcode, for
// the log of opcodes (0: none to log); w, if set, waits for its reply.
func (l *ledger) written(xid int32, at time.Time, op int32, w *ownRequest) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if w != nil {
		if l.waiters == nil {
			l.waiters = map[int32]ownRequest{}
		}
		l.waiters[xid] = *w
	}
	l.sent = append(l.sent, sentRequest{xid: xid, at: at})
	if op != 0 && recordOps.Load() {
		l.ops = append(l.ops, op)
	}
}

// note adds op to the log of opcodes, if recordOps is on.
func (l *ledger) note(op int32) {
	if !recordOps.Load() {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.ops = append(l.ops, op)
}

// loggedOps returns a copy of the log of opcodes.
func (l *ledger) loggedOps() []int32 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]int32(nil), l.ops...)
}

// answered takes the request with xid off the list of those in flight,
// with every request sent before it (answered in order, so their replies
// are not coming), and returns its send time.
func (l *ledger) answered(xid int32) (time.Time, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, r := range l.sent {
		if r.xid == xid {
			// Drop it and those before it, keeping the array.
			n := copy(l.sent, l.sent[i+1:])
			l.sent = l.sent[:n]
			return r.at, true
		}
	}
	return time.Time{}, false // not ours, or not understood: prove nothing
}

// waiter takes the injected request with xid, if one waits.
func (l *ledger) waiter(xid int32) (ownRequest, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	r, ok := l.waiters[xid]
	delete(l.waiters, xid)
	return r, ok
}

// failWaiters ends the wait of every injected request: its reply is not
// coming.
func (l *ledger) failWaiters() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for xid, r := range l.waiters {
		close(r.reply)
		delete(l.waiters, xid)
	}
}
