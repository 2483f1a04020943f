package zkconn

import (
	"bytes"
	"encoding/binary"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"go.uber.org/zap"

	"github.com/gocurator/curator/internal/zkwire"
)

// seen is what a recursive subscriber of /a was handed.
type seen struct {
	Type zk.EventType
	Path string
	Zxid int64
}

// feedPersistent reads stream (after a connect response) through a wire
// whose registry holds a recursive watch on /a, and returns the bytes
// go-zookeeper would get and the events the subscriber got.
func feedPersistent(t testing.TB, stream []byte, chunks []int) ([]byte, []seen) {
	t.Helper()
	var set Counts
	pw := NewRegistry(zap.NewNop(), &set, func() *Conn { return nil })
	var got []seen
	s := &Subscriber{Recursive: true,
		Event: func(typ zk.EventType, path string, zxid int64) bool {
			got = append(got, seen{typ, path, zxid})
			return false
		},
		Resync: func(bool, bool) bool { return true },
	}
	pw.entries["/a"] = &entry{path: "/a", mode: zkwire.ModePersistentRecursive, subs: map[*Subscriber]struct{}{s: {}}, recursive: 1}
	pw.n.Store(1)
	w := NewWire(Config{Counts: &set, Registry: pw})
	data := append(connectReply(6000), stream...)
	cc := deadlineConn{&chunkConn{data: data, chunks: chunks}}
	wc := &Conn{Conn: cc, w: w}
	wc.caps.Store(capYes)
	if _, err := wc.Write(connectRequestFrame()); err != nil {
		t.Fatal(err)
	}
	var out []byte
	buf := make([]byte, 7)
	for {
		n, err := wc.Read(buf)
		out = append(out, buf[:n]...)
		if n == 0 || err != nil {
			break
		}
	}
	return out[min(len(out), len(connectReply(6000))):], got
}

// deadlineConn is a chunkConn whose deadlines do nothing (an injected
// write sets one).
type deadlineConn struct{ *chunkConn }

func (deadlineConn) SetWriteDeadline(time.Time) error { return nil }

// notification is a watch notification frame.
func notification(zxid int64, typ int32, path string) []byte {
	return zkwire.Reply(zkwire.NotificationXid, zxid, 0, zkwire.AppendWatcherEvent(nil, zkwire.WatcherEvent{Type: typ, State: 3, Path: path}))
}

// expectedPass walks the frames of stream as a reader independent of the
// wire's would: the frames that reach go-zookeeper are all but the
// replies to the client's own xids and the notifications the watch on /a
// takes (segment-wise under /a; go-zookeeper has no one-shot watch here).
func expectedPass(stream []byte) []byte {
	var out []byte
	for b := stream; len(b) > 0; {
		if len(b) < 4 {
			return append(out, b...)
		}
		n := max(int(int32(binary.BigEndian.Uint32(b))), 0)
		if 4+n > len(b) {
			return append(out, b...) // the rest is one frame's
		}
		f := b[:4+n]
		b = b[4+n:]
		drop := false
		if n >= zkwire.ReplyHeaderLen && n <= maxInspected {
			xid := int32(binary.BigEndian.Uint32(f[4:]))
			if isOwnXid(xid) {
				drop = true
			} else if xid == zkwire.NotificationXid {
				if ev, err := zkwire.ParseWatcherEvent(f[4+zkwire.ReplyHeaderLen:]); err == nil {
					drop = ev.Path == "/a" || strings.HasPrefix(ev.Path, "/a/")
				}
			}
		}
		if !drop {
			out = append(out, f...)
		}
	}
	return out
}

func persistentStream() []byte {
	var b []byte
	b = append(b, notification(-1, zkwire.EventNodeCreated, "/a")...)
	b = append(b, notification(0x42, zkwire.EventNodeDataChanged, "/a/b")...)
	b = append(b, notification(-1, zkwire.EventNodeCreated, "/ab")...)                   // not ours: passes
	b = append(b, notification(-1, zkwire.EventNodeChildrenChanged, "/a")...)            // taken, never delivered
	b = append(b, zkwire.Reply(ownXidBase-5, 0x43, zkwire.ErrOK, nil)...)                // our reply: taken
	b = append(b, reply(7)...)                                                           // go-zookeeper's reply: passes
	b = append(b, zkwire.Reply(ownXidBase, 0, zkwire.ErrUnimplemented, []byte{1, 2})...) // taken
	b = append(b, notification(-1, zkwire.EventNodeDeleted, "/a/b/c")...)
	return b
}

// The frames the wire injects replies for and the notifications it takes
// are removed whole, wherever the stream is cut into reads; everything
// else passes byte for byte; the subscriber gets /a and its subtree only,
// no children change, and the 3.9 zxid of the header (0 before 3.9).
func TestPersistentFramesTaken(t *testing.T) {
	stream := persistentStream()
	out, got := feedPersistent(t, stream, nil)
	want := slices.Concat(notification(-1, zkwire.EventNodeCreated, "/ab"), reply(7))
	if !bytes.Equal(out, want) {
		t.Fatalf("passed %x\nwant   %x", out, want)
	}
	wantSeen := []seen{
		{zk.EventNodeCreated, "/a", 0},
		{zk.EventNodeDataChanged, "/a/b", 0x42},
		{zk.EventNodeDeleted, "/a/b/c", 0},
	}
	if !reflect.DeepEqual(got, wantSeen) {
		t.Fatalf("subscriber got %+v, want %+v", got, wantSeen)
	}
	for cut := 1; cut < len(stream); cut++ {
		o, g := feedPersistent(t, stream, []int{len(connectReply(6000)) + cut})
		if !bytes.Equal(o, out) || !reflect.DeepEqual(g, got) {
			t.Fatalf("cut at %d: passed %x, got %+v", cut, o, g)
		}
	}
}

// Whatever the server sends, the wire never panics, passes exactly the
// frames an independent walk says it should, byte for byte, records the
// same however the reads are cut, and never hands the recursive
// subscriber a children change or a path outside /a.
func FuzzPersistentFrames(f *testing.F) {
	f.Add(persistentStream(), uint8(3), uint8(5))
	f.Add(notification(-1, 4, "/a"), uint8(1), uint8(1))
	f.Add([]byte{0, 0, 0, 8, 0xf0, 0, 0, 0, 1, 2}, uint8(2), uint8(0))
	f.Add(zkwire.Reply(ownXidBase-1, 0, 0, nil), uint8(9), uint8(2))
	f.Fuzz(func(t *testing.T, stream []byte, a, b uint8) {
		out, got := feedPersistent(t, stream, nil)
		if want := expectedPass(stream); !bytes.Equal(out, want) {
			t.Fatalf("passed %x, want %x", out, want)
		}
		for _, ev := range got {
			if ev.Type == zk.EventNodeChildrenChanged || ev.Path != "/a" && !strings.HasPrefix(ev.Path, "/a/") {
				t.Fatalf("subscriber got %+v", ev)
			}
		}
		so, sg := feedPersistent(t, stream, []int{len(connectReply(6000)) + int(a), int(b)})
		if !bytes.Equal(so, out) || !reflect.DeepEqual(sg, got) {
			t.Fatalf("split reads: passed %x got %+v; one read %x %+v", so, sg, out, got)
		}
	})
}

// go-zookeeper's setWatches, rewritten: the paths with a persistent watch
// leave all three lists (a one-shot there would turn the persistent watch
// into a one-shot, ZOOKEEPER-4466), the rest keep their order, the xid and
// relative zxid stay; a body not understood passes unchanged.
func FuzzSetWatchesFilter(f *testing.F) {
	f.Add(int64(7), "/a,/b,/c", "/a,/x", "/c,/a/b", int32(9))
	f.Add(int64(-1), "", "", "/a", int32(1))
	f.Fuzz(func(t *testing.T, zxid int64, data, exist, child string, xid int32) {
		split := func(s string) []string {
			if s == "" {
				return []string{}
			}
			return strings.Split(s, ",")
		}
		req := zkwire.SetWatches{RelativeZxid: zxid, Data: split(data), Exist: split(exist), Child: split(child)}
		frame := zkwire.Request(xid, zkwire.OpSetWatches, req.Append(nil, false))
		p := NewRegistry(zap.NewNop(), &Counts{}, func() *Conn { return nil })
		p.entries["/a"] = &entry{path: "/a"}
		p.entries["/c"] = &entry{path: "/c"}
		out := p.filterSetWatchesLocked(frame)
		if binary.BigEndian.Uint32(out[4:8]) != uint32(xid) || int32(binary.BigEndian.Uint32(out[8:12])) != zkwire.OpSetWatches ||
			int(binary.BigEndian.Uint32(out[0:4])) != len(out)-4 {
			t.Fatalf("header of %x", out)
		}
		got, err := zkwire.ParseSetWatches(out[12:], false)
		if err != nil {
			t.Fatal(err)
		}
		keep := func(v []string) []string {
			return slices.DeleteFunc(slices.Clone(v), func(s string) bool { return s == "/a" || s == "/c" })
		}
		if got.RelativeZxid != zxid || !slices.Equal(got.Data, keep(req.Data)) ||
			!slices.Equal(got.Exist, keep(req.Exist)) || !slices.Equal(got.Child, keep(req.Child)) {
			t.Fatalf("filtered %+v from %+v", got, req)
		}
		// A body not understood passes as it is.
		bad := append(slices.Clone(frame), 0xff)
		if out := p.filterSetWatchesLocked(bad); !bytes.Equal(out, bad) {
			t.Fatal("a body not understood was changed")
		}
	})
}
