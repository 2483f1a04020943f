package bench

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"sort"
	"strings"
	"time"
)

// OpTrace counts the requests a ZooKeeper server receives, by type, from
// the server's own request trace: ZooKeeper's PrepRequestProcessor (the
// first stage every request of a standalone server passes, reads and pings
// included) logs each request with its type at TRACE level when the
// server's trace mask includes client requests. mntr has no per-type
// counters, so this is the most direct server-side source there is.
//
// The trace costs the server a log line per request, so it is switched on
// only for a short window: the stmk four-letter word sets the trace mask at
// run time (2 = client requests, 0 = nothing). The logger level has to be
// TRACE from the start (TraceJVMArgs); with the mask at 0 that leaves the
// DEBUG lines of the same logger, a few per write (the ACL of a create and
// the data-tree digest), which every implementation pays alike.
//
// It needs the server's log file, so it works with a server this process
// launched, not with an external one.
type OpTrace struct {
	addr    string
	logPath string
	offset  int64 // the log's size when the window opened
}

// TraceJVMArgs are the server JVM options OpTrace needs (slf4j-simple, the
// binding of Debian's ZooKeeper, as zktest launches it).
var TraceJVMArgs = []string{
	"-Dorg.slf4j.simpleLogger.log.org.apache.zookeeper.server.PrepRequestProcessor=trace",
}

// Trace mask bits, from ZooTrace.
const (
	traceMaskNone          = 0
	traceMaskClientRequest = 2
)

// NewOpTrace prepares counting on the server at addr, whose output goes to
// logPath, and switches the trace off (a server starts with client
// requests in its mask).
func NewOpTrace(addr, logPath string) (*OpTrace, error) {
	t := &OpTrace{addr: addr, logPath: logPath}
	if err := setTraceMask(addr, traceMaskNone); err != nil {
		return nil, err
	}
	return t, nil
}

// Start opens a counting window.
func (t *OpTrace) Start() error {
	st, err := os.Stat(t.logPath)
	if err != nil {
		return fmt.Errorf("op trace: %w", err)
	}
	t.offset = st.Size()
	return setTraceMask(t.addr, traceMaskClientRequest)
}

// traceEndMarker is ZooTrace's log line when the mask is set to 0.
const traceEndMarker = "Set text trace mask to 0x0"

// Stop closes the window and returns the requests the server received in
// it, by type (ZooKeeper's names: create, getChildren2, exists, ...).
func (t *OpTrace) Stop() (map[string]int64, error) {
	if err := setTraceMask(t.addr, traceMaskNone); err != nil {
		return nil, err
	}
	// The marker is logged by the thread that ran stmk: wait until it is
	// in the file, then count what came before it.
	deadline := time.Now().Add(5 * time.Second)
	for {
		counts, found, err := countTrace(t.logPath, t.offset)
		if err != nil || found {
			return counts, err
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("op trace: %q not in %s", traceEndMarker, t.logPath)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// countTrace counts the request trace lines of the log from offset up to
// the end marker, and reports whether the marker was there.
func countTrace(path string, offset int64) (map[string]int64, bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, false, fmt.Errorf("op trace: %w", err)
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return nil, false, fmt.Errorf("op trace: %w", err)
	}
	counts := map[string]int64{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.Contains(line, traceEndMarker) {
			return counts, true, nil
		}
		if op, ok := traceOp(line); ok {
			counts[op]++
		}
	}
	return counts, false, sc.Err()
}

// traceOp returns the request type of a PrepRequestProcessor trace line:
// "... TRACE ...PrepRequestProcessor - :Psessionid:0x... type:create cxid:...".
func traceOp(line string) (string, bool) {
	i := strings.Index(line, ":Psessionid:")
	if i < 0 {
		return "", false
	}
	_, rest, ok := strings.Cut(line[i:], " type:")
	if !ok {
		return "", false
	}
	op, _, _ := strings.Cut(rest, " ")
	return op, op != ""
}

// setTraceMask sends stmk with mask (an 8-byte big-endian long that the
// server reads with the command, so both go in one write).
func setTraceMask(addr string, mask uint64) error {
	addr, _, _ = strings.Cut(addr, ",")
	conn, err := net.DialTimeout("tcp", addr, 3*time.Second)
	if err != nil {
		return fmt.Errorf("stmk: %w", err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(3 * time.Second))
	msg := make([]byte, 12)
	copy(msg, "stmk")
	binary.BigEndian.PutUint64(msg[4:], mask)
	if _, err := conn.Write(msg); err != nil {
		return fmt.Errorf("stmk: %w", err)
	}
	b, err := io.ReadAll(conn)
	if err != nil {
		return fmt.Errorf("stmk: %w", err)
	}
	if got := strings.TrimSpace(string(b)); got != fmt.Sprint(mask) {
		return fmt.Errorf("stmk %d answered %q", mask, got)
	}
	return nil
}

// OpsString formats requests per cycle by type, most frequent first, e.g.
// "create 1, getChildren2 1, delete 1, exists 0.12"; types under 0.005 per
// cycle are left out.
func OpsString(ops map[string]float64) string {
	type kv struct {
		k string
		v float64
	}
	var list []kv
	for k, v := range ops {
		if v >= 0.005 {
			list = append(list, kv{k, v})
		}
	}
	sort.Slice(list, func(i, j int) bool {
		if list[i].v != list[j].v {
			return list[i].v > list[j].v
		}
		return list[i].k < list[j].k
	})
	var parts []string
	for _, e := range list {
		parts = append(parts, e.k+" "+trimFloat(e.v))
	}
	return strings.Join(parts, ", ")
}

// trimFloat prints v with two decimals, without trailing zeros.
func trimFloat(v float64) string {
	s := fmt.Sprintf("%.2f", v)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	if s == "" || s == "-" {
		return "0"
	}
	return s
}
