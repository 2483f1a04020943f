package framework

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"

	"github.com/go-zookeeper/zk"
)

// ConfigPath is the znode where ZooKeeper (3.5+) publishes the ensemble's
// dynamic configuration. It is outside every chroot and namespace.
const ConfigPath = "/zookeeper/config"

// ErrBadConfig is returned for an ensemble configuration that cannot be
// read: a server line that is not "server.<id>=<host>:<port>:<port>
// [:role][;[<client host>:]<client port>]", or a bad version.
var ErrBadConfig = errors.New("curator: bad ensemble configuration")

// Member is one server of the ensemble as its configuration lists it, a
// line "server.<id>=<host>:<quorum port>:<election port>[:<role>]
// [;[<client host>:]<client port>]". Hosts are kept as written, never
// resolved.
type Member struct {
	// ID is the server's id (its myid).
	ID int64
	// Host is the quorum address's host: a DNS name or an IP literal.
	Host string
	// QuorumPort and ElectionPort are the ports the servers talk on;
	// clients never dial them.
	QuorumPort, ElectionPort int
	// Role is "participant" or "observer".
	Role string
	// ClientHost is the client address's host as written: "" when the
	// line gives a port only, and possibly a wildcard such as 0.0.0.0.
	ClientHost string
	// ClientPort is the port clients connect to; 0 when the server has no
	// client address in the configuration.
	ClientPort int
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
	if host == "" || isWildcard(host) {
		host = m.Host
	}
	if host == "" || isWildcard(host) {
		return ""
	}
	return net.JoinHostPort(host, strconv.Itoa(m.ClientPort))
}

// String returns the member's configuration line, the form Joining and
// WithMembers take.
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

// EnsembleConfig is the ensemble's configuration, as ZooKeeper publishes it
// at ConfigPath.
type EnsembleConfig struct {
	// Members are the servers, in id order.
	Members []Member
	// Version is the configuration's version (the zxid of the
	// reconfiguration that made it), for FromConfig; 0 if the
	// configuration has none (a static one).
	Version int64
}

// Servers returns the client addresses of the members that have one, in
// id order: the servers a client of this configuration connects to.
func (cfg EnsembleConfig) Servers() []string {
	var out []string
	for _, m := range cfg.Members {
		if a := m.ClientAddr(); a != "" {
			out = append(out, a)
		}
	}
	return out
}

// ConnectString returns Servers comma-separated, a connect string without
// chroot.
func (cfg EnsembleConfig) ConnectString() string { return strings.Join(cfg.Servers(), ",") }

// Member returns the member with id, if any.
func (cfg EnsembleConfig) Member(id int64) (Member, bool) {
	for _, m := range cfg.Members {
		if m.ID == id {
			return m, true
		}
	}
	return Member{}, false
}

// ParseConfig parses an ensemble configuration in ZooKeeper's format, the
// data of ConfigPath: "server.<id>=..." lines (see Member) and a
// "version=<hex>" line; other lines are ignored. Errors wrap ErrBadConfig.
func ParseConfig(data []byte) (EnsembleConfig, error) {
	var cfg EnsembleConfig
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
				return EnsembleConfig{}, fmt.Errorf("%w: version %q", ErrBadConfig, value)
			}
			cfg.Version = v
		case strings.HasPrefix(key, "server."):
			m, err := ParseMember(line)
			if err != nil {
				return EnsembleConfig{}, err
			}
			cfg.Members = append(cfg.Members, m)
		}
	}
	slices.SortFunc(cfg.Members, func(a, b Member) int { return cmp.Compare(a.ID, b.ID) })
	return cfg, nil
}

// ParseMember parses one server line,
// "server.<id>=<host>:<quorum port>:<election port>[:<role>]
// [;[<client host>:]<client port>]". Of several quorum addresses
// (ZooKeeper 3.6's "a|b") the first is kept. Errors wrap ErrBadConfig.
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

// isWildcard reports whether host is an unspecified address (0.0.0.0, ::),
// which a server listens on but a client cannot dial.
func isWildcard(host string) bool {
	ip := net.ParseIP(host)
	return ip != nil && ip.IsUnspecified()
}

// Config reads the ensemble's configuration from ConfigPath (Curator's
// getConfig), under the retry policy, honouring ctx. The path is read as
// is, outside the chroot and namespace. A server without dynamic
// configuration (standalone) answers an empty configuration. If the
// ensemble tracker is on (WithEnsembleTracker), the configuration read
// also updates the servers the client reconnects to.
func (c *Client) Config(ctx context.Context) (EnsembleConfig, error) {
	if c == nil {
		return EnsembleConfig{}, ErrNilClient
	}
	var data []byte
	err := c.do(ctx, reqGet, func(conn *zk.Conn) error {
		d, _, err := conn.Get(ConfigPath)
		data = d
		return err
	})
	if err != nil {
		return EnsembleConfig{}, fmt.Errorf("config: %w", err)
	}
	cfg, err := ParseConfig(data)
	if err != nil {
		return EnsembleConfig{}, fmt.Errorf("config: %w", err)
	}
	c.trackConfig(cfg)
	return cfg, nil
}
