package main

import (
	"io"
	"net"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/gocurator/curator/cmd/internal/bench"
)

// TestMain also serves the proxy when the test binary is started as the
// benchmark's proxy process (startProxy runs os.Executable).
func TestMain(m *testing.M) {
	if serveProxyIfAsked() {
		return
	}
	goleak.VerifyTestMain(m)
}

func TestParseFlags(t *testing.T) {
	f, err := parseFlags(nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(f.rtts, []time.Duration{0, 500 * time.Microsecond, 2 * time.Millisecond}) ||
		f.rounds != 3 || f.hold != 5*time.Millisecond || f.many != 64 ||
		!slices.Equal(f.manyRTTs, []time.Duration{2 * time.Millisecond}) || f.workloads != "headline" || f.fsync {
		t.Fatalf("defaults: %+v", f)
	}
	f, err = parseFlags([]string{"-rtt", "1ms, 0,1ms", "-many-rtt", "all", "-fsync", "-zk-dir", "/var/tmp", "-plot", "x.png"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(f.rtts, []time.Duration{time.Millisecond, 0}) || f.manyRTTs != nil || !f.fsync || f.zkDir != "/var/tmp" {
		t.Fatalf("parsed: %+v", f)
	}
	for _, bad := range [][]string{
		{"-rtt", "fast"}, {"-rtt", "-1ms"}, {"-rtt", ""}, {"-rounds", "0"}, {"-plot", "chart.txt"},
		{"-hold", "-1s"}, {"-zk", "host:1/chroot"}, {"extra"},
	} {
		if _, err := parseFlags(bad); err == nil {
			t.Errorf("parseFlags(%q) succeeded", bad)
		}
	}
}

func TestScenarios(t *testing.T) {
	f, err := parseFlags([]string{"-clients", "4"})
	if err != nil {
		t.Fatal(err)
	}
	label := func(ss []bench.Scenario) string {
		var out []string
		for _, s := range ss {
			out = append(out, s.Label())
		}
		return strings.Join(out, "; ")
	}
	at0 := label(scenarios(f, bench.Headline, 0))
	want0 := "mutex, 4 sessions; mutex, 4 sessions, hold 5ms; uncontended, 1 session; read, 4 sessions; semaphore, 4 sessions, 4 leases"
	if at0 != want0 {
		t.Fatalf("at RTT 0:\n%s\nwant\n%s", at0, want0)
	}
	at2 := label(scenarios(f, bench.Headline, 2*time.Millisecond))
	if !strings.Contains(at2, "mutex, 64 sessions") {
		t.Fatalf("at RTT 2ms the 64-session row is missing: %s", at2)
	}
	if !strings.Contains(at2, "election, 2 sessions, hold 20ms") {
		t.Fatalf("at RTT 2ms the election's fail-over row is missing: %s", at2)
	}
}

// The proxy runs in a child process (here the test binary) and delays.
func TestProxyProcess(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		io.Copy(c, c)
	}()
	p, err := startProxy(ln.Addr().String(), 20*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	c, err := net.Dial("tcp", p.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// Not a ZooKeeper frame: passed through as raw bytes, delayed too.
	start := time.Now()
	if _, err := c.Write([]byte("ruok")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4)
	c.SetReadDeadline(time.Now().Add(30 * time.Second))
	if _, err := io.ReadFull(c, buf); err != nil || string(buf) != "ruok" {
		t.Fatalf("echo through the proxy: %q, %v", buf, err)
	}
	if d := time.Since(start); d < 40*time.Millisecond {
		t.Fatalf("round trip %v through a proxy delaying 20ms each way", d)
	}
	c.Close()
	if share := p.Close(); share < 0 || share > 2 {
		t.Fatalf("proxy CPU share %v", share)
	}
}

func TestServeProxyRejectsBadSpec(t *testing.T) {
	for _, spec := range []string{"127.0.0.1:1", "127.0.0.1:1 soon"} {
		if err := serveProxy(spec, strings.NewReader(""), io.Discard); err == nil {
			t.Errorf("serveProxy(%q) succeeded", spec)
		}
	}
	_ = os.Getenv(proxyEnv)
}
