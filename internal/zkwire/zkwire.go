// Package zkwire is the one table of ZooKeeper's wire protocol the module
// uses: the opcodes (ZooDefs.OpCode), the special xids, and the encoding of
// the few request and reply bodies the client writes or reads itself
// (framework's wrapped socket) or that the test proxy looks at (zktest).
// go-zookeeper keeps its own encoders unexported; these cover only what it
// lacks.
//
// A frame is [int32 length][payload]. A request's payload starts with
// [int32 xid][int32 opcode]; a reply's with [int32 xid][int64 zxid][int32
// err]. Strings and byte buffers are [int32 length][bytes] (-1: null),
// vectors [int32 count][elements].
package zkwire

import (
	"encoding/binary"
	"errors"
)

// Opcodes, as ZooDefs.OpCode numbers them.
const (
	OpNotification    = 0
	OpCreate          = 1
	OpDelete          = 2
	OpExists          = 3
	OpGetData         = 4
	OpSetData         = 5
	OpGetACL          = 6
	OpSetACL          = 7
	OpGetChildren     = 8
	OpSync            = 9
	OpPing            = 11
	OpGetChildren2    = 12
	OpCheck           = 13
	OpMulti           = 14
	OpCreate2         = 15
	OpReconfig        = 16
	OpCheckWatches    = 17
	OpRemoveWatches   = 18
	OpCreateContainer = 19
	OpDeleteContainer = 20
	OpCreateTTL       = 21
	OpMultiRead       = 22
	OpAuth            = 100
	OpSetWatches      = 101
	OpSASL            = 102
	OpGetEphemerals   = 103
	OpGetAllChildren  = 104 // getAllChildrenNumber
	OpSetWatches2     = 105 // 3.6+
	OpAddWatch        = 106 // 3.6+
	OpWhoAmI          = 107 // 3.7+
	OpCloseSession    = -11
)

// IsCreate reports whether op creates a single znode.
func IsCreate(op int32) bool {
	switch op {
	case OpCreate, OpCreate2, OpCreateContainer, OpCreateTTL:
		return true
	}
	return false
}

// Special xids. Replies carry the xid of their request; the server pushes
// notifications with NotificationXid.
const (
	NotificationXid = -1
	PingXid         = -2
	AuthXid         = -4
	SetWatchesXid   = -8 // the Java client's; go-zookeeper uses ordinary xids
)

// Error codes of a reply header (KeeperException.Code) the client acts on.
const (
	ErrOK            = 0
	ErrUnimplemented = -6
	ErrBadArguments  = -8
	ErrNoWatcher     = -121
)

// AddWatch modes (AddWatchMode).
const (
	ModePersistent          = 0
	ModePersistentRecursive = 1
)

// RemoveWatches types (Watcher.WatcherType). ZooKeeper 3.6-3.8 keeps a
// persistent watch in both its data and child tables: Any removes it.
const (
	WatcherChildren = 1
	WatcherData     = 2
	WatcherAny      = 3
)

// Event types of a WatcherEvent (Watcher.Event.EventType).
const (
	EventNodeCreated         = 1
	EventNodeDeleted         = 2
	EventNodeDataChanged     = 3
	EventNodeChildrenChanged = 4
)

// ReplyHeaderLen is the length of a reply header: xid, zxid, err.
const ReplyHeaderLen = 16

// ErrShort is returned for a body that ends early or holds a length out of
// range.
var ErrShort = errors.New("zkwire: short or malformed body")

// Request returns a whole frame, length prefix included, for a request
// of op with xid and body.
func Request(xid, op int32, body []byte) []byte {
	b := make([]byte, 12, 12+len(body))
	binary.BigEndian.PutUint32(b[0:4], uint32(8+len(body)))
	binary.BigEndian.PutUint32(b[4:8], uint32(xid))
	binary.BigEndian.PutUint32(b[8:12], uint32(op))
	return append(b, body...)
}

// AppendString appends s as a jute string.
func AppendString(b []byte, s string) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(len(s)))
	return append(b, s...)
}

// AppendStrings appends v as a jute vector of strings.
func AppendStrings(b []byte, v []string) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(len(v)))
	for _, s := range v {
		b = AppendString(b, s)
	}
	return b
}

// AddWatchBody is an AddWatchRequest: {path, mode}.
func AddWatchBody(path string, mode int32) []byte {
	b := AppendString(make([]byte, 0, 8+len(path)), path)
	return binary.BigEndian.AppendUint32(b, uint32(mode))
}

// RemoveWatchesBody is a RemoveWatchesRequest: {path, type}.
func RemoveWatchesBody(path string, typ int32) []byte {
	b := AppendString(make([]byte, 0, 8+len(path)), path)
	return binary.BigEndian.AppendUint32(b, uint32(typ))
}

// SetWatches is a SetWatches (101) request body, or a SetWatches2 (105)
// one with the two persistent lists.
type SetWatches struct {
	RelativeZxid int64
	Data         []string
	Exist        []string
	Child        []string
	// SetWatches2 only:
	Persistent          []string
	PersistentRecursive []string
}

// Append appends w as a SetWatches body, or as a SetWatches2 body if two
// is set.
func (w *SetWatches) Append(b []byte, two bool) []byte {
	b = binary.BigEndian.AppendUint64(b, uint64(w.RelativeZxid))
	b = AppendStrings(b, w.Data)
	b = AppendStrings(b, w.Exist)
	b = AppendStrings(b, w.Child)
	if two {
		b = AppendStrings(b, w.Persistent)
		b = AppendStrings(b, w.PersistentRecursive)
	}
	return b
}

// ParseSetWatches reads a SetWatches body (two: a SetWatches2 body).
func ParseSetWatches(b []byte, two bool) (SetWatches, error) {
	var w SetWatches
	if len(b) < 8 {
		return w, ErrShort
	}
	w.RelativeZxid = int64(binary.BigEndian.Uint64(b))
	r := reader{b: b[8:]}
	w.Data = r.strings()
	w.Exist = r.strings()
	w.Child = r.strings()
	if two {
		w.Persistent = r.strings()
		w.PersistentRecursive = r.strings()
	}
	if r.bad || len(r.b) != 0 {
		return SetWatches{}, ErrShort
	}
	return w, nil
}

// ParsePathBody reads the {path, int32} body of an AddWatch or
// RemoveWatches request.
func ParsePathBody(b []byte) (path string, n int32, err error) {
	r := reader{b: b}
	path = r.string()
	n = r.int32()
	if r.bad || len(r.b) != 0 {
		return "", 0, ErrShort
	}
	return path, n, nil
}

// WatcherEvent is the body of a notification: {type, state, path}.
type WatcherEvent struct {
	Type  int32
	State int32
	Path  string
}

// ParseWatcherEvent reads a notification's body (after the reply header).
func ParseWatcherEvent(b []byte) (WatcherEvent, error) {
	r := reader{b: b}
	ev := WatcherEvent{Type: r.int32(), State: r.int32(), Path: r.string()}
	if r.bad {
		return WatcherEvent{}, ErrShort
	}
	return ev, nil
}

// AppendWatcherEvent appends ev as a notification body.
func AppendWatcherEvent(b []byte, ev WatcherEvent) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(ev.Type))
	b = binary.BigEndian.AppendUint32(b, uint32(ev.State))
	return AppendString(b, ev.Path)
}

// Reply returns a whole reply frame: header and body.
func Reply(xid int32, zxid int64, errCode int32, body []byte) []byte {
	b := make([]byte, 4+ReplyHeaderLen, 4+ReplyHeaderLen+len(body))
	binary.BigEndian.PutUint32(b[0:4], uint32(ReplyHeaderLen+len(body)))
	binary.BigEndian.PutUint32(b[4:8], uint32(xid))
	binary.BigEndian.PutUint64(b[8:16], uint64(zxid))
	binary.BigEndian.PutUint32(b[16:20], uint32(errCode))
	return append(b, body...)
}

// ReplyHeader reads a reply header (the payload's first 16 bytes).
func ReplyHeader(p []byte) (xid int32, zxid int64, errCode int32, ok bool) {
	if len(p) < ReplyHeaderLen {
		return 0, 0, 0, false
	}
	return int32(binary.BigEndian.Uint32(p[0:4])), int64(binary.BigEndian.Uint64(p[4:12])),
		int32(binary.BigEndian.Uint32(p[12:16])), true
}

// reader reads jute values off a body; bad is set, and zero values
// returned, once it runs short.
type reader struct {
	b   []byte
	bad bool
}

func (r *reader) int32() int32 {
	if len(r.b) < 4 {
		r.bad = true
		return 0
	}
	v := int32(binary.BigEndian.Uint32(r.b))
	r.b = r.b[4:]
	return v
}

func (r *reader) string() string {
	n := r.int32()
	switch {
	case r.bad:
		return ""
	case n == -1:
		return ""
	case n < 0 || int(n) > len(r.b):
		r.bad = true
		return ""
	}
	s := string(r.b[:n])
	r.b = r.b[n:]
	return s
}

func (r *reader) strings() []string {
	n := r.int32()
	if r.bad || n <= 0 {
		if n < -1 {
			r.bad = true
		}
		return nil
	}
	// Each string takes at least four bytes: a count past that is not a
	// vector of this body, and must not size an allocation.
	if int(n) > len(r.b)/4 {
		r.bad = true
		return nil
	}
	v := make([]string, 0, n)
	for i := int32(0); i < n && !r.bad; i++ {
		v = append(v, r.string())
	}
	if r.bad {
		return nil
	}
	return v
}
