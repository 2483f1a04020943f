package zkconn

import (
	"bytes"
	"testing"
	"time"

	"github.com/gocurator/curator/internal/clock"
)

// writeLog is a scripted connection (scriptConn) that keeps what is
// written to it.
type writeLog struct {
	scriptConn
	out bytes.Buffer
}

func (s *writeLog) Write(p []byte) (int, error) { return s.out.Write(p) }

func (s *writeLog) SetWriteDeadline(time.Time) error { return nil }

func (s *writeLog) Close() error { return nil }

// take returns what was written since the last take.
func (s *writeLog) take() []byte {
	b := bytes.Clone(s.out.Bytes())
	s.out.Reset()
	return b
}

// The keepalive's decision, frame by frame on a fake clock: no ping before
// the connect response; a ping once the last answered send and the last
// ping of ours are both an interval old, and not before; its reply
// acknowledges its send time, like go-zookeeper's pings'; a request
// answered meanwhile makes a ping needless.
func TestWireKeepalive(t *testing.T) {
	fake := clock.NewFake(time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC))
	w := NewWire(Config{Clock: fake})
	lc := &writeLog{}
	c := &Conn{Conn: lc, w: w}
	w.live = c
	read := func(frames ...[]byte) {
		t.Helper()
		for _, f := range frames {
			lc.in.Write(f)
		}
		buf := make([]byte, 4096)
		for lc.in.Len() > 0 || c.in != nil && c.in.Buffered() > 0 {
			if _, err := c.Read(buf); err != nil {
				t.Fatal(err)
			}
		}
	}
	const every = 200 * time.Millisecond
	keepalive := func(what string, wantPing bool, wantNext time.Time) {
		t.Helper()
		next := w.Keepalive(fake.Now(), every)
		got := lc.take()
		switch {
		case wantPing && !bytes.Equal(got, pingFrame):
			t.Fatalf("%s: wrote %x, want a ping %x", what, got, pingFrame)
		case !wantPing && len(got) > 0:
			t.Fatalf("%s: wrote %x, want nothing", what, got)
		case !next.Equal(wantNext):
			t.Fatalf("%s: next look at %v, want %v", what, next, wantNext)
		}
	}

	start := fake.Now()
	if _, err := c.Write(connectRequestFrame()); err != nil {
		t.Fatal(err)
	}
	lc.take()
	fake.Advance(time.Second)
	keepalive("before the connect response", false, fake.Now().Add(every))
	read(connectReply(4000))
	if !w.Acked().Equal(start) {
		t.Fatalf("acked %v, want the connect request's send", w.Acked())
	}
	// The connect request's send is a second old now: due at once.
	keepalive("an old acknowledgement", true, fake.Now().Add(every))
	pinged := fake.Now()
	keepalive("just pinged, no reply yet", false, pinged.Add(every))
	fake.Advance(every - time.Millisecond)
	keepalive("a millisecond early", false, pinged.Add(every))
	fake.Advance(time.Millisecond)
	keepalive("the first ping unanswered for an interval", true, fake.Now().Add(every))
	second := fake.Now()
	read(reply(pingXid))
	if !w.Acked().Equal(pinged) {
		t.Fatalf("acked %v after the first ping's reply, want its send %v", w.Acked(), pinged)
	}
	read(reply(pingXid))
	if !w.Acked().Equal(second) {
		t.Fatalf("acked %v after the second ping's reply, want its send %v", w.Acked(), second)
	}

	// A busy connection: a request answered half an interval later puts
	// the next ping off to an interval after its send.
	fake.Advance(every / 2)
	sent := fake.Now()
	if _, err := c.Write(request(1, 4)); err != nil {
		t.Fatal(err)
	}
	lc.take()
	read(reply(1))
	fake.Advance(every / 2)
	keepalive("a request answered half an interval ago", false, sent.Add(every))

	// Between connections nothing is written.
	w.mu.Lock()
	w.live = nil
	w.mu.Unlock()
	fake.Advance(time.Second)
	keepalive("no connection", false, fake.Now().Add(every))
}
