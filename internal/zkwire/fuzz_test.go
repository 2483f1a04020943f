package zkwire

import (
	"reflect"
	"strings"
	"testing"
)

// Whatever bytes a body holds, the parsers never panic, and what they
// accept encodes back to the same bytes.
func FuzzParsers(f *testing.F) {
	sw := SetWatches{RelativeZxid: 7, Data: []string{"/a"}, Exist: []string{}, Child: []string{"/b"},
		Persistent: []string{"/p"}, PersistentRecursive: []string{}}
	f.Add(sw.Append(nil, false))
	f.Add(sw.Append(nil, true))
	f.Add(AddWatchBody("/x", ModePersistent))
	f.Add(AppendWatcherEvent(nil, WatcherEvent{Type: EventNodeCreated, State: 3, Path: "/n"}))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, two := range []bool{false, true} {
			if w, err := ParseSetWatches(b, two); err == nil {
				if again, err := ParseSetWatches(w.Append(nil, two), two); err != nil || !reflect.DeepEqual(again, w) {
					t.Fatalf("SetWatches (two %v) %+v read back as %+v, %v", two, w, again, err)
				}
			}
		}
		if p, n, err := ParsePathBody(b); err == nil {
			if p2, n2, err := ParsePathBody(AddWatchBody(p, n)); err != nil || p2 != p || n2 != n {
				t.Fatalf("path body %q %d read back as %q %d, %v", p, n, p2, n2, err)
			}
		}
		if ev, err := ParseWatcherEvent(b); err == nil {
			if again, err := ParseWatcherEvent(AppendWatcherEvent(nil, ev)); err != nil || again != ev {
				t.Fatalf("event %+v read back as %+v, %v", ev, again, err)
			}
		}
		ReplyHeader(b)
	})
}

// Every encoder's output is read back by its parser, for paths of any
// content and lists of any length.
func FuzzEncoders(f *testing.F) {
	f.Add(int64(1), "/a,/b", "/c", int32(1))
	f.Add(int64(-1), "", "/", int32(-3))
	f.Fuzz(func(t *testing.T, zxid int64, list, path string, n int32) {
		paths := strings.Split(list, ",")
		w := SetWatches{RelativeZxid: zxid, Data: paths, Exist: paths, Child: paths, Persistent: paths, PersistentRecursive: paths}
		got, err := ParseSetWatches(w.Append(nil, true), true)
		if err != nil || !reflect.DeepEqual(got, w) {
			t.Fatalf("SetWatches2 %+v read back as %+v, %v", w, got, err)
		}
		if p, m, err := ParsePathBody(RemoveWatchesBody(path, n)); err != nil || p != path || m != n {
			t.Fatalf("RemoveWatches %q %d read back as %q %d, %v", path, n, p, m, err)
		}
		xid, z, code, ok := ReplyHeader(Reply(n, zxid, n, nil)[4:])
		if !ok || xid != n || z != zxid || code != n {
			t.Fatalf("reply header read back as %d %d %d %v", xid, z, code, ok)
		}
	})
}
