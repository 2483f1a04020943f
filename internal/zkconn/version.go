package zkconn

import (
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"
)

// serverVersion dials a server and reads its version off srvr's answer
// ("Zookeeper version: 3.8.0-..., built on ...").
func serverVersion(dial func() (net.Conn, error)) (string, error) {
	if dial == nil {
		return "", errors.New("no dialer")
	}
	conn, err := dial()
	if err != nil {
		return "", err
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(probeTimeout)); err != nil {
		return "", err
	}
	if _, err := io.WriteString(conn, "srvr"); err != nil {
		return "", err
	}
	b, err := io.ReadAll(io.LimitReader(conn, 4096))
	if err != nil && len(b) == 0 {
		return "", err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "Zookeeper version:"); ok {
			v = strings.TrimSpace(v)
			if i := strings.IndexAny(v, "-, "); i >= 0 {
				v = v[:i]
			}
			return v, nil
		}
	}
	return "", fmt.Errorf("srvr: no version in %q", strings.TrimSpace(string(b)))
}

// hasPersistentWatches reports whether version (major.minor.patch) is
// 3.6 or later.
func hasPersistentWatches(version string) bool {
	parts := strings.SplitN(version, ".", 3)
	if len(parts) < 2 {
		return false
	}
	major, err1 := strconv.Atoi(parts[0])
	minor, err2 := strconv.Atoi(parts[1])
	if err1 != nil || err2 != nil {
		return false
	}
	return major > 3 || major == 3 && minor >= 6
}

// ServerVersion asks c's server for its version (srvr, on a connection of
// its own to the same server) and returns it ("3.8.0").
func (c *Conn) ServerVersion() (string, error) { return serverVersion(c.dialAgain) }
