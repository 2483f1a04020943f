package framework

import (
	"context"
	"fmt"
	"strings"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/internal/ensemble"
	"github.com/gocurator/curator/internal/telemetry/clienttel"
)

// ConfigPath is the znode where ZooKeeper (3.5+) publishes the ensemble's
// dynamic configuration. It is outside every chroot and namespace.
const ConfigPath = "/zookeeper/config"

// ErrBadConfig is returned for an ensemble configuration that cannot be
// read: a server line that is not "server.<id>=<host>:<port>:<port>
// [:role][;[<client host>:]<client port>]", or a bad version.
var ErrBadConfig = ensemble.ErrBadConfig

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
func (m Member) ClientAddr() string { return ensemble.Member(m).ClientAddr() }

// String returns the member's configuration line, the form Joining and
// WithMembers take.
func (m Member) String() string { return ensemble.Member(m).String() }

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
	members, version, err := ensemble.ParseConfig(data)
	if err != nil {
		return EnsembleConfig{}, err
	}
	cfg := EnsembleConfig{Version: version}
	for _, m := range members {
		cfg.Members = append(cfg.Members, Member(m))
	}
	return cfg, nil
}

// ParseMember parses one server line,
// "server.<id>=<host>:<quorum port>:<election port>[:<role>]
// [;[<client host>:]<client port>]". Of several quorum addresses
// (ZooKeeper 3.6's "a|b") the first is kept. Errors wrap ErrBadConfig.
func ParseMember(line string) (Member, error) {
	m, err := ensemble.ParseMember(line)
	return Member(m), err
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
	err := c.do(ctx, clienttel.OpGet, func(conn *zk.Conn) error {
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
