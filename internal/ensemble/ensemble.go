// Package ensemble reads and writes ZooKeeper's ensemble configuration
// format, the data of /zookeeper/config: "server.<id>=<host>:<quorum
// port>:<election port>[:<role>][;[<client host>:]<client port>]" lines
// and a "version=<hex>" line. It is the parser behind framework's
// ParseConfig and ParseMember, whose Member has the same fields as this
// package's (framework converts between them), and it decides which
// address a client dials, the subject of several of Curator's tracker
// bugs (CURATOR-384/392/402/638/664). It depends on the standard library
// only.
package ensemble

import (
	"cmp"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
)

// ErrBadConfig is returned for a configuration that cannot be read.
var ErrBadConfig = errors.New("curator: bad ensemble configuration")

// Member is one server line. framework.Member has the same fields, with
// their documentation.
type Member struct {
	ID                       int64
	Host                     string
	QuorumPort, ElectionPort int
	Role                     string
	ClientHost               string
	ClientPort               int
}

// ClientAddr returns the address clients dial, host:port, or "" when the
// member has no client port (clients must not dial the quorum port,
// CURATOR-384/392/402). The host is the client address's as written
// (a configured DNS name stays a name, CURATOR-638/664), or the quorum
// host when the client address is a wildcard (0.0.0.0, ::) or absent,
// since a wildcard only says the server listens everywhere.
func (m Member) ClientAddr() string {
	if m.ClientPort <= 0 {
		return ""
	}
	host := m.ClientHost
	if host == "" || IsWildcard(host) {
		host = m.Host
	}
	if host == "" || IsWildcard(host) {
		return ""
	}
	return net.JoinHostPort(host, strconv.Itoa(m.ClientPort))
}

// String returns the member's configuration line, which ParseMember
// reads back to the same member.
func (m Member) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "server.%d=%s:%d:%d", m.ID, bracket(m.Host), m.QuorumPort, m.ElectionPort)
	if m.Role != "" {
		b.WriteString(":" + m.Role)
	}
	if m.ClientPort > 0 {
		b.WriteString(";")
		if m.ClientHost != "" {
			b.WriteString(bracket(m.ClientHost) + ":")
		}
		b.WriteString(strconv.Itoa(m.ClientPort))
	}
	return b.String()
}

// ParseConfig parses a configuration: its server lines, in id order, and
// its version (0 if it has none). Other lines are ignored. Errors wrap
// ErrBadConfig.
func ParseConfig(data []byte) (members []Member, version int64, err error) {
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		key, value, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		switch {
		case key == "version":
			v, err := strconv.ParseInt(value, 16, 64)
			if err != nil {
				return nil, 0, fmt.Errorf("%w: version %q", ErrBadConfig, value)
			}
			version = v
		case strings.HasPrefix(key, "server."):
			m, err := ParseMember(line)
			if err != nil {
				return nil, 0, err
			}
			members = append(members, m)
		}
	}
	slices.SortFunc(members, func(a, b Member) int { return cmp.Compare(a.ID, b.ID) })
	return members, version, nil
}

// ParseMember parses one server line. Of several quorum addresses
// (ZooKeeper 3.6's "a|b") the first is kept; the role defaults to
// "participant". Errors wrap ErrBadConfig and leave the zero Member.
func ParseMember(line string) (Member, error) {
	bad := func(why string) (Member, error) {
		return Member{}, fmt.Errorf("%w: %q: %s", ErrBadConfig, line, why)
	}
	key, value, ok := strings.Cut(strings.TrimSpace(line), "=")
	if !ok || !strings.HasPrefix(key, "server.") {
		return bad("not server.<id>=...")
	}
	var m Member
	id, err := strconv.ParseInt(key[len("server."):], 10, 64)
	if err != nil || id <= 0 {
		return bad("bad server id")
	}
	m.ID = id
	quorum, client, hasClient := strings.Cut(value, ";")
	quorum, _, _ = strings.Cut(quorum, "|")
	host, rest, err := splitHost(quorum)
	if err != nil || host == "" {
		return bad("bad quorum address")
	}
	m.Host = host
	parts := strings.Split(rest, ":")
	if len(parts) < 2 || len(parts) > 3 {
		return bad("want host:quorumPort:electionPort[:role]")
	}
	if m.QuorumPort, err = port(parts[0]); err != nil {
		return bad("quorum port: " + err.Error())
	}
	if m.ElectionPort, err = port(parts[1]); err != nil {
		return bad("election port: " + err.Error())
	}
	m.Role = "participant"
	if len(parts) == 3 {
		switch parts[2] {
		case "participant", "observer":
			m.Role = parts[2]
		default:
			return bad("role " + strconv.Quote(parts[2]))
		}
	}
	if !hasClient {
		return m, nil
	}
	client = strings.TrimSpace(client)
	if p, err := port(client); err == nil {
		m.ClientPort = p
		return m, nil
	}
	chost, cport, err := net.SplitHostPort(client)
	if err != nil {
		return bad("bad client address")
	}
	if m.ClientPort, err = port(cport); err != nil {
		return bad("client port: " + err.Error())
	}
	m.ClientHost = chost
	return m, nil
}

// splitHost splits "host:rest" or "[v6]:rest".
func splitHost(s string) (host, rest string, err error) {
	if strings.HasPrefix(s, "[") {
		end := strings.Index(s, "]")
		if end < 0 || len(s) < end+2 || s[end+1] != ':' {
			return "", "", errors.New("bad bracketed host")
		}
		return s[1:end], s[end+2:], nil
	}
	host, rest, ok := strings.Cut(s, ":")
	if !ok {
		return "", "", errors.New("no port")
	}
	return host, rest, nil
}

func port(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > 65535 {
		return 0, fmt.Errorf("bad port %q", s)
	}
	return n, nil
}

func bracket(host string) string {
	if strings.Contains(host, ":") {
		return "[" + host + "]"
	}
	return host
}

// IsWildcard reports whether host is an unspecified address (0.0.0.0, ::),
// which a server listens on but a client cannot dial.
func IsWildcard(host string) bool {
	ip := net.ParseIP(host)
	return ip != nil && ip.IsUnspecified()
}
