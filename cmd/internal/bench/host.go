package bench

import (
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// Header describes where a benchmark ran.
type Header struct {
	Date      string `json:"date"`
	Cores     int    `json:"cores"`
	Uname     string `json:"uname"`
	GoVersion string `json:"go_version"`
	ZooKeeper string `json:"zookeeper"` // version from srvr
	Server    string `json:"server"`    // embedded or external, data dir
	Curator   string `json:"curator,omitempty"`
	// LoadAvg is /proc/loadavg's 1, 5 and 15 minute averages at the start:
	// on a shared machine, other processes' load is the main source of
	// noise.
	LoadAvg string `json:"load_avg,omitempty"`
}

// LoadAvg returns the 1, 5 and 15 minute load averages, or "".
func LoadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}

// NewHeader gathers the header; server describes the ZooKeeper server.
func NewHeader(addr, server string) Header {
	h := Header{
		Date:      time.Now().Format(time.RFC3339),
		Cores:     runtime.NumCPU(),
		GoVersion: runtime.Version(),
		Server:    server,
		Curator:   CuratorVersion(),
		LoadAvg:   LoadAvg(),
	}
	if out, err := exec.Command("uname", "-sr").Output(); err == nil {
		h.Uname = strings.TrimSpace(string(out))
	} else {
		h.Uname = runtime.GOOS + "/" + runtime.GOARCH
	}
	h.ZooKeeper = ZooKeeperVersion(addr)
	return h
}

// String is the header line printed above the table.
func (h Header) String() string {
	s := fmt.Sprintf("# %s | %d cores, %s | ZooKeeper %s (%s) | %s",
		h.Date, h.Cores, h.Uname, h.ZooKeeper, h.Server, h.GoVersion)
	if h.Curator != "" {
		s += " | " + h.Curator
	}
	if h.LoadAvg != "" {
		s += " | load avg " + h.LoadAvg
	}
	return s
}

// ZooKeeperVersion asks the first server of addr for its version with the
// srvr four-letter word; the answer explains a failure instead.
func ZooKeeperVersion(addr string) string {
	b, err := fourLetter(addr, "srvr")
	if err != nil {
		return "unknown (" + err.Error() + ")"
	}
	for _, line := range strings.Split(b, "\n") {
		if v, ok := strings.CutPrefix(line, "Zookeeper version:"); ok {
			// "3.8.0-5a02a05eddb59aee6ac762f7ea82e92a68eb9c0f, built on ..."
			v, _, _ = strings.Cut(strings.TrimSpace(v), ",")
			if short, _, ok := strings.Cut(v, "-"); ok && short != "" {
				v = short
			}
			return v
		}
	}
	return fmt.Sprintf("unknown (srvr answered %q)", strings.TrimSpace(b))
}

// fourLetter sends a four-letter word to the first server of addr and
// returns the answer.
func fourLetter(addr, cmd string) (string, error) {
	addr, _, _ = strings.Cut(addr, ",")
	conn, err := net.DialTimeout("tcp", addr, 3*time.Second)
	if err != nil {
		return "", fmt.Errorf("%s: %w", cmd, err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(3 * time.Second))
	if _, err := io.WriteString(conn, cmd); err != nil {
		return "", fmt.Errorf("%s: %w", cmd, err)
	}
	b, err := io.ReadAll(conn)
	if err != nil {
		return "", fmt.Errorf("%s: %w", cmd, err)
	}
	return string(b), nil
}

// watchCount is the server's total number of watches (wchs).
func watchCount(addr string) (int, error) {
	b, err := fourLetter(addr, "wchs")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(b, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "Total watches:"); ok {
			return strconv.Atoi(strings.TrimSpace(v))
		}
	}
	return 0, fmt.Errorf("wchs answered %q", strings.TrimSpace(b))
}
