package zkwire

import (
	"encoding/binary"
	"reflect"
	"testing"
)

func TestRoundTrips(t *testing.T) {
	sw := SetWatches{RelativeZxid: 42, Data: []string{"/a"}, Exist: []string{}, Child: []string{"/b", "/c"},
		Persistent: []string{"/p"}, PersistentRecursive: []string{"/r", "/s"}}
	tests := []struct {
		name string
		two  bool
		want SetWatches
	}{
		{"SetWatches", false, SetWatches{RelativeZxid: 42, Data: []string{"/a"}, Child: []string{"/b", "/c"}}},
		{"SetWatches2", true, SetWatches{RelativeZxid: 42, Data: []string{"/a"}, Child: []string{"/b", "/c"},
			Persistent: []string{"/p"}, PersistentRecursive: []string{"/r", "/s"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseSetWatches(sw.Append(nil, tt.two), tt.two)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
		})
	}
	if p, m, err := ParsePathBody(AddWatchBody("/x/y", ModePersistentRecursive)); err != nil || p != "/x/y" || m != ModePersistentRecursive {
		t.Fatalf("AddWatch body: %q %d %v", p, m, err)
	}
	if p, typ, err := ParsePathBody(RemoveWatchesBody("/x", WatcherAny)); err != nil || p != "/x" || typ != WatcherAny {
		t.Fatalf("RemoveWatches body: %q %d %v", p, typ, err)
	}
	ev := WatcherEvent{Type: EventNodeDataChanged, State: 3, Path: "/n"}
	f := Reply(NotificationXid, 0x99, ErrOK, AppendWatcherEvent(nil, ev))
	if int(binary.BigEndian.Uint32(f)) != len(f)-4 {
		t.Fatal("reply length")
	}
	xid, zxid, code, ok := ReplyHeader(f[4:])
	if !ok || xid != NotificationXid || zxid != 0x99 || code != ErrOK {
		t.Fatalf("header %d %d %d %v", xid, zxid, code, ok)
	}
	if got, err := ParseWatcherEvent(f[4+ReplyHeaderLen:]); err != nil || got != ev {
		t.Fatalf("event %+v %v", got, err)
	}
	r := Request(7, OpAddWatch, []byte{1})
	if int(binary.BigEndian.Uint32(r)) != 9 || int32(binary.BigEndian.Uint32(r[4:])) != 7 || int32(binary.BigEndian.Uint32(r[8:])) != OpAddWatch {
		t.Fatalf("request %x", r)
	}
}

// Malformed bodies are refused, never read past their end, and never size
// an allocation from a count they cannot hold.
func TestMalformed(t *testing.T) {
	for _, b := range [][]byte{
		nil,
		{0, 0, 0, 0, 0, 0, 0, 1}, // zxid only
		{0, 0, 0, 0, 0, 0, 0, 1, 0x7f, 0xff, 0xff, 0xff},           // a huge count
		{0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 9, '/', 'a'}, // a string past the end
	} {
		if _, err := ParseSetWatches(b, false); err == nil {
			t.Errorf("ParseSetWatches(%x) accepted", b)
		}
	}
	if _, err := ParseWatcherEvent([]byte{0, 0, 0, 1}); err == nil {
		t.Error("short event accepted")
	}
	if _, _, err := ParsePathBody([]byte{0, 0, 0, 2, '/'}); err == nil {
		t.Error("short path body accepted")
	}
}
