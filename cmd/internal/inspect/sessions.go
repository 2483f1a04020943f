package inspect

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"
)

// Sessions is what the servers' "cons" four-letter word says about the
// sessions connected to them.
type Sessions struct {
	// addrs maps each connected session to its client's address.
	addrs map[int64]string
	// Complete is true when every server answered: a session none of them
	// lists is then not connected to any.
	Complete bool
	// Problems says, per server that did not answer, why.
	Problems []string
}

// State returns Connected, Disconnected or Unknown for session id, and the
// client's address when connected.
func (s *Sessions) State(id int64) (state, addr string) {
	if s == nil {
		return Unknown, ""
	}
	if a, ok := s.addrs[id]; ok {
		return Connected, a
	}
	if s.Complete {
		return Disconnected, ""
	}
	return Unknown, ""
}

// ErrFourLetterRefused is returned when a server does not run a
// four-letter word (it is not in 4lw.commands.whitelist).
var ErrFourLetterRefused = fmt.Errorf("four-letter word not allowed (4lw.commands.whitelist)")

// ParseCons reads the output of "cons": one line per connection,
// " /ip:port[n](queued=...,sid=0x...,...)". Connections without a session
// yet (such as the one asking) have no sid and are left out.
func ParseCons(text string) (map[int64]string, error) {
	if strings.Contains(text, "not executed because it is not in the whitelist") {
		return nil, ErrFourLetterRefused
	}
	out := map[int64]string{}
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		i := strings.Index(line, "sid=0x")
		if i < 0 {
			continue
		}
		rest := line[i+len("sid=0x"):]
		if j := strings.IndexAny(rest, ",)"); j >= 0 {
			rest = rest[:j]
		}
		id, err := strconv.ParseUint(rest, 16, 64)
		if err != nil {
			return nil, fmt.Errorf("cons: bad session id in %q", line)
		}
		// The address ends where "[n](" begins (an IPv6 address has
		// brackets of its own).
		addr := strings.TrimPrefix(line, "/")
		if j := strings.Index(addr, "]("); j >= 0 {
			if k := strings.LastIndexByte(addr[:j], '['); k >= 0 {
				addr = addr[:k]
			}
		}
		out[int64(id)] = addr
	}
	return out, nil
}

// Servers returns the host:port list of a Curator connect string,
// host:port[,host:port...][/chroot] (port 2181 when left out).
func Servers(connect string) []string {
	hosts := connect
	if i := strings.IndexByte(connect, '/'); i >= 0 {
		hosts = connect[:i]
	}
	var out []string
	for _, h := range strings.Split(hosts, ",") {
		h = strings.TrimSpace(h)
		if h == "" {
			continue
		}
		if _, _, err := net.SplitHostPort(h); err != nil {
			h = net.JoinHostPort(h, "2181")
		}
		out = append(out, h)
	}
	return out
}

// QuerySessions asks every server for "cons", each within timeout (and
// ctx), and merges the answers.
func QuerySessions(ctx context.Context, servers []string, timeout time.Duration) *Sessions {
	s := &Sessions{addrs: map[int64]string{}, Complete: len(servers) > 0}
	for _, srv := range servers {
		text, err := FourLetterWord(ctx, srv, "cons", timeout)
		var conns map[int64]string
		if err == nil {
			conns, err = ParseCons(text)
		}
		if err != nil {
			s.Complete = false
			s.Problems = append(s.Problems, fmt.Sprintf("%s: %v", srv, err))
			continue
		}
		for id, a := range conns {
			s.addrs[id] = a
		}
	}
	return s
}

// maxFourLetter bounds what is read of a four-letter word's answer.
const maxFourLetter = 16 << 20

// FourLetterWord sends cmd to the server at addr and returns its answer.
func FourLetterWord(ctx context.Context, addr, cmd string, timeout time.Duration) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	if _, err := io.WriteString(conn, cmd); err != nil {
		return "", err
	}
	b, err := io.ReadAll(io.LimitReader(bufio.NewReader(conn), maxFourLetter))
	if err != nil {
		return "", err
	}
	if len(b) == 0 {
		return "", ErrFourLetterRefused
	}
	return string(b), nil
}

// Annotate fills in each participant's connection state and client
// address from s, and its age at now.
func Annotate(locks []Lock, s *Sessions, now time.Time) {
	for i := range locks {
		annotate(locks[i].Holders, s, now)
		annotate(locks[i].Waiters, s, now)
	}
}

func annotate(ps []Participant, s *Sessions, now time.Time) {
	for i := range ps {
		ps[i].Connected, ps[i].Addr = s.State(ps[i].owner)
		ps[i].AgeSeconds = max(0, now.Sub(ps[i].Created).Round(time.Millisecond).Seconds())
	}
}
