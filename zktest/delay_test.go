package zktest_test

import (
	"bufio"
	"fmt"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/gocurator/curator/zktest"
)

// Through a delayed proxy a ZooKeeper request takes at least two delays
// (one each way), and pipelined requests share their round trips: the delay
// is latency, not a limit on throughput.
//
// The throughput bound is a hang detector (5 s), not a stopwatch: the 400
// requests take a few round trips pipelined (well under a second), while a
// proxy that applies the delay one chunk after another needs a round trip
// (at least 2*delay, as checked first) per chunk, and the client coalesces
// only a couple of requests per write: about 200 round trips, 10 s.
func TestProxyDelayRealServer(t *testing.T) {
	srv := zktest.StartServer(t)
	p := zktest.NewProxy(t, srv.Addr())
	c, _ := connect(t, []string{p.Addr()})
	if _, _, err := c.Exists("/"); err != nil { // warm the path
		t.Fatal(err)
	}

	const delay = 25 * time.Millisecond
	p.SetDelay(delay)
	if got := p.Delay(); got != delay {
		t.Fatalf("Delay() = %v, want %v", got, delay)
	}
	var rtts []time.Duration
	for range 10 {
		start := time.Now()
		if _, _, err := c.Exists("/"); err != nil {
			t.Fatal(err)
		}
		rtt := time.Since(start)
		if rtt < 2*delay {
			t.Fatalf("round trip %v through a proxy with one-way delay %v, want at least %v", rtt, delay, 2*delay)
		}
		rtts = append(rtts, rtt)
	}
	slices.Sort(rtts)
	rtt := rtts[len(rtts)/2]
	t.Logf("one-way delay %v: median round trip %v", delay, rtt)

	const n = 400
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, _, err := c.Exists("/zookeeper"); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	took := time.Since(start)
	t.Logf("%d concurrent exists: %v (%.1f round trips; one at a time would take %d)", n, took, float64(took)/float64(rtt), n)
	if took >= 5*time.Second {
		t.Fatalf("%d concurrent requests took %v, %.0f round trips of %v: the delay limits throughput",
			n, took, float64(took)/float64(rtt), rtt)
	}

	// Back to no delay: round trips shrink again.
	p.SetDelay(0)
	start = time.Now()
	if _, _, err := c.Exists("/"); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d >= 2*delay {
		t.Logf("round trip without delay %v (a loaded machine?)", d)
	}
}

// stamped is a frame payload carrying its sequence number and send time.
func stamped(i int) string { return fmt.Sprintf("%d %d", i, time.Now().UnixNano()) }

// Every frame arrives in order and no earlier than its send time plus the
// delay, and a burst is not spaced out by it: the proxy goes on reading
// while earlier chunks wait for their delay.
func TestProxyDelayKeepsOrderWithoutLimitingThroughput(t *testing.T) {
	target := newFakeTarget(t)
	p := zktest.NewProxy(t, target.ln.Addr().String())
	client, server := target.dial(t, p)

	const delay = 2 * time.Millisecond
	const n = 500
	p.SetDelay(delay)
	go func() {
		w := bufio.NewWriter(client.conn)
		for i := range n {
			w.Write(frame(stamped(i)))
			if i%10 == 9 {
				w.Flush() // chunks of ten frames, so several are in flight
			}
		}
		w.Flush()
	}()
	for i := range n {
		got, err := readPayload(server.conn, server.r, waitTimeout)
		arrived := time.Now()
		if err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		var seq int
		var sent int64
		if _, err := fmt.Sscanf(got, "%d %d", &seq, &sent); err != nil || seq != i {
			t.Fatalf("frame %d: got %q, want sequence number %d", i, got, i)
		}
		if early := time.Unix(0, sent).Add(delay).Sub(arrived); early > 0 {
			t.Fatalf("frame %d arrived %v before its delay of %v was up", i, early, delay)
		}
	}

	// The other direction too.
	server.send(t, "reply")
	client.expect(t, "reply")

	// Throughput, by what the proxy does rather than how long it takes:
	// while the first chunk of a burst waits out a delay far longer than
	// the test, the proxy goes on reading, so a burst much larger than the
	// sockets' buffers is written in full. A proxy that held the delay in
	// its reader (one chunk after another) would stop reading, and the
	// writes would block until the write deadline, a hang detector.
	p.SetDelay(time.Hour)
	const burst, chunk = 64 << 20, 64 << 10
	buf := frame(string(make([]byte, chunk-4))) // one frame per write
	client.conn.SetWriteDeadline(time.Now().Add(waitTimeout))
	for sent := 0; sent < burst; sent += chunk {
		if _, err := client.conn.Write(buf); err != nil {
			t.Fatalf("after %d MiB of a burst held by the delay: %v: the proxy stopped reading", sent>>20, err)
		}
	}
	p.Cut() // drops the burst
}

// Lowering the delay never lets a new frame overtake one still queued.
func TestProxyDelayChangeKeepsOrder(t *testing.T) {
	target := newFakeTarget(t)
	p := zktest.NewProxy(t, target.ln.Addr().String())
	client, server := target.dial(t, p)

	p.SetDelay(100 * time.Millisecond)
	client.send(t, "first")
	p.SetDelay(0)
	client.send(t, "second")
	server.expect(t, "first")
	server.expect(t, "second")
	// With nothing queued any more, frames go straight through.
	client.send(t, "third")
	server.expect(t, "third")
}

// The delay composes with the partition faults: Cut still closes at once,
// a black hole swallows what was in flight, and Restore forwards again,
// still delayed.
func TestProxyDelayWithFaults(t *testing.T) {
	const delay = 50 * time.Millisecond

	t.Run("cut closes at once and drops what is in flight", func(t *testing.T) {
		target := newFakeTarget(t)
		p := zktest.NewProxy(t, target.ln.Addr().String())
		client, server := target.dial(t, p)
		p.SetDelay(delay)
		client.send(t, "in flight")
		start := time.Now()
		p.Cut()
		client.expectClosed(t)
		if d := time.Since(start); d >= delay {
			t.Logf("close took %v (a loaded machine?)", d)
		}
		server.expectClosed(t)
		p.Restore()
		client2, server2 := target.dial(t, p)
		sent := time.Now()
		client2.send(t, "after")
		server2.expect(t, "after")
		if d := time.Since(sent); d < delay {
			t.Fatalf("frame through the restored proxy took %v, want the delay %v", d, delay)
		}
	})

	t.Run("a black hole drops what falls due in it", func(t *testing.T) {
		target := newFakeTarget(t)
		p := zktest.NewProxy(t, target.ln.Addr().String())
		client, server := target.dial(t, p)
		p.SetDelay(delay)
		server.send(t, "in flight")
		p.BlackHole()
		client.expectSilence(t)
		p.Restore()
		// The frame was lost, so the stream has a gap: Restore closes it.
		client.expectClosed(t)
		server.expectClosed(t)
	})

	t.Run("a side that closes is passed on after its bytes", func(t *testing.T) {
		target := newFakeTarget(t)
		p := zktest.NewProxy(t, target.ln.Addr().String())
		client, server := target.dial(t, p)
		p.SetDelay(delay)
		server.send(t, "last words")
		server.conn.(*net.TCPConn).CloseWrite()
		client.expect(t, "last words")
		client.expectClosed(t)
	})
}
