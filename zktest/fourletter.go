package zktest

import (
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"
)

// fourLetterTimeout bounds one four-letter-word exchange; a healthy local
// server answers in milliseconds.
const fourLetterTimeout = 3 * time.Second

// fourLetterWord sends cmd (ruok, srvr, wchs, cons, mntr, ...) to the
// server at addr and returns its whole answer.
func fourLetterWord(addr, cmd string) (string, error) {
	return fourLetterWordWithin(addr, cmd, fourLetterTimeout)
}

func fourLetterWordWithin(addr, cmd string, timeout time.Duration) (string, error) {
	if len(cmd) != 4 {
		return "", fmt.Errorf("zktest: four-letter word %q is not four letters", cmd)
	}
	conn, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return "", fmt.Errorf("zktest: %s %s: %w", cmd, addr, err)
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(timeout)); err != nil {
		return "", fmt.Errorf("zktest: %s %s: %w", cmd, addr, err)
	}
	if _, err := io.WriteString(conn, cmd); err != nil {
		return "", fmt.Errorf("zktest: %s %s: %w", cmd, addr, err)
	}
	b, err := io.ReadAll(conn)
	if err != nil {
		return "", fmt.Errorf("zktest: %s %s: %w", cmd, addr, err)
	}
	return string(b), nil
}

// parseMode returns the value of srvr's "Mode: " line (standalone, leader,
// follower, observer), or "" while the server is not serving.
func parseMode(srvr string) string {
	v, _ := lineValue(srvr, "Mode:")
	return v
}

// parseTotalWatches reads wchs's "Total watches:N".
func parseTotalWatches(wchs string) (int, error) {
	v, ok := lineValue(wchs, "Total watches:")
	if !ok {
		return 0, fmt.Errorf("zktest: no watch total in wchs answer %q", wchs)
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, fmt.Errorf("zktest: wchs answer %q: %w", wchs, err)
	}
	return n, nil
}

// lineValue finds the line starting with prefix and returns the rest,
// trimmed.
func lineValue(text, prefix string) (string, bool) {
	for _, line := range strings.Split(text, "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), prefix); ok {
			return strings.TrimSpace(rest), true
		}
	}
	return "", false
}
