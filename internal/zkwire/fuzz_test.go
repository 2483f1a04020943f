package zkwire

import (
	"bytes"
	"reflect"
	"testing"
)

// The decoders take any bytes without panicking, and what they accept
// encodes back to the very bytes they read (a SetWatches body, a path
// body) or to a body that reads the same (a notification, whose path may
// be null on the wire and reads as ""). Seeds are well-formed bodies and
// cuts of them.
func FuzzDecoders(f *testing.F) {
	sw := SetWatches{RelativeZxid: 7, Data: []string{"/a"}, Child: []string{"/b", "/c"},
		Persistent: []string{"/p"}, PersistentRecursive: []string{"/r"}}
	for _, seed := range [][]byte{
		sw.Append(nil, false),
		sw.Append(nil, true),
		AddWatchBody("/x/y", ModePersistentRecursive),
		RemoveWatchesBody("/x", WatcherAny),
		AppendWatcherEvent(nil, WatcherEvent{Type: EventNodeDataChanged, State: 3, Path: "/n"}),
		Reply(NotificationXid, 9, ErrOK, AppendWatcherEvent(nil, WatcherEvent{Type: 1, State: 3, Path: "/m"}))[4:],
		{0, 0, 0, 0, 0, 0, 0, 1, 0x7f, 0xff, 0xff, 0xff},
		nil,
	} {
		f.Add(seed)
		if len(seed) > 3 {
			f.Add(seed[:len(seed)/2])
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, two := range []bool{false, true} {
			if w, err := ParseSetWatches(b, two); err == nil {
				if got := w.Append(nil, two); !bytes.Equal(got, b) && !nullsAsEmpty(b, got, two) {
					t.Fatalf("SetWatches(two=%v) %x read as %+v, which encodes as %x", two, b, w, got)
				}
			}
		}
		if p, n, err := ParsePathBody(b); err == nil {
			again, m, err := ParsePathBody(append(AppendString(nil, p), b[len(b)-4:]...))
			if err != nil || again != p || m != n {
				t.Fatalf("path body %x read as %q %d, re-read as %q %d %v", b, p, n, again, m, err)
			}
		}
		if ev, err := ParseWatcherEvent(b); err == nil {
			again, err := ParseWatcherEvent(AppendWatcherEvent(nil, ev))
			if err != nil || again != ev {
				t.Fatalf("event %x read as %+v, re-read as %+v %v", b, ev, again, err)
			}
		}
		ReplyHeader(b)
	})
}

// nullsAsEmpty reports whether b and got differ only where b has a null
// vector or string (length -1) that reads as empty: ParseSetWatches
// accepts what Java writes for a null list.
func nullsAsEmpty(b, got []byte, two bool) bool {
	w1, err1 := ParseSetWatches(b, two)
	w2, err2 := ParseSetWatches(got, two)
	return err1 == nil && err2 == nil && reflect.DeepEqual(normalise(w1), normalise(w2))
}

// normalise makes nil and empty lists alike.
func normalise(w SetWatches) SetWatches {
	for _, v := range []*[]string{&w.Data, &w.Exist, &w.Child, &w.Persistent, &w.PersistentRecursive} {
		if len(*v) == 0 {
			*v = nil
		}
	}
	return w
}
