package zkconn

import (
	"encoding/binary"

	"github.com/gocurator/curator/internal/zkwire"
)

// CreateReply is what the reply to a create told: the transaction that
// created the node (its czxid) and the node's path.
type CreateReply struct {
	Zxid    int64  // the create's zxid: the node's czxid, mzxid and pzxid
	Session int64  // the session of the connection that read it
	Path    string // as the server created it
}

// wanted is a create whose reply we want to read.
type wanted struct {
	path string        // the request path (the map's key)
	sent chan struct{} // closed once the request is written
}

// Expect asks for the reply to a create of path (a server path). The
// channel returned is closed once the create request has been written: a
// request sent after that is answered after the create (ZooKeeper answers
// a session's requests in order).
func (w *Wire) Expect(path string) <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	e, ok := w.want[path]
	if !ok {
		e = wanted{path: path, sent: make(chan struct{})}
		w.want[path] = e
	}
	return e.sent
}

// Take returns the reply to a create of path, if seen, and forgets it.
func (w *Wire) Take(path string) (CreateReply, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	r, ok := w.got[path]
	delete(w.got, path)
	delete(w.want, path)
	if ignoreReplies.Load() {
		return CreateReply{}, false
	}
	return r, ok
}

func (c *Conn) request(p []byte) {
	if len(p) < 16 {
		return
	}
	switch int32(binary.BigEndian.Uint32(p[8:12])) {
	case zkwire.OpCreate, zkwire.OpCreate2, zkwire.OpCreateContainer, zkwire.OpCreateTTL:
	default:
		return
	}
	n := int(binary.BigEndian.Uint32(p[12:16]))
	if n < 0 || 16+n > len(p) {
		return
	}
	c.w.mu.Lock()
	// The lookup with string(bytes) does not allocate; the path stored is
	// the map's own key.
	if e, ok := c.w.want[string(p[16:16+n])]; ok {
		select {
		case <-e.sent:
		default:
			close(e.sent)
		}
		c.w.pending[int32(binary.BigEndian.Uint32(p[4:8]))] = e.path
	}
	c.w.mu.Unlock()
}
