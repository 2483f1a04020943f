package framework

import (
	"context"
	"fmt"
	"strconv"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/internal/ensemble"
	"github.com/gocurator/curator/internal/telemetry/clienttel"
	"github.com/gocurator/curator/retry"
)

// ReconfigOption says what Reconfig changes: Joining and Leaving for an
// incremental change, WithMembers for a whole new member list, and
// FromConfig to make it conditional.
type ReconfigOption func(*reconfigOptions) error

type reconfigOptions struct {
	joining []Member
	leaving []int64
	members []Member
	full    bool  // WithMembers was given
	version int64 // FromConfig; -1 for any
}

// Joining adds servers to the ensemble, or changes the addresses or role
// of members, each given as its configuration line (see Member.String and
// ParseMember): "server.4=10.0.0.4:2888:3888:participant;2181". A line
// that does not parse makes Reconfig fail with ErrInvalidOption.
func Joining(servers ...string) ReconfigOption {
	return func(o *reconfigOptions) error {
		ms, err := parseMembers(servers)
		o.joining = append(o.joining, ms...)
		return err
	}
}

// Leaving removes the members with these ids from the ensemble.
func Leaving(ids ...int64) ReconfigOption {
	return func(o *reconfigOptions) error {
		for _, id := range ids {
			if id <= 0 {
				return invalid("leaving server id %d", id)
			}
		}
		o.leaving = append(o.leaving, ids...)
		return nil
	}
}

// WithMembers replaces the whole ensemble by servers (a non-incremental
// reconfiguration), each given as for Joining. It excludes Joining and
// Leaving.
func WithMembers(servers ...string) ReconfigOption {
	return func(o *reconfigOptions) error {
		ms, err := parseMembers(servers)
		o.members = append(o.members, ms...)
		o.full = true
		return err
	}
}

// FromConfig makes the reconfiguration apply only if the configuration is
// still at version (EnsembleConfig.Version, as Config read it); otherwise
// Reconfig fails with an error wrapping zk.ErrBadVersion.
func FromConfig(version int64) ReconfigOption {
	return func(o *reconfigOptions) error {
		if version < 0 {
			return invalid("config version %d", version)
		}
		o.version = version
		return nil
	}
}

func parseMembers(servers []string) ([]Member, error) {
	ms := make([]Member, 0, len(servers))
	for _, s := range servers {
		m, err := ParseMember(s)
		if err != nil {
			return nil, invalid("%w", err)
		}
		ms = append(ms, m)
	}
	return ms, nil
}

// Reconfig changes the ensemble's membership (ZooKeeper 3.5+ dynamic
// reconfiguration, Curator's reconfig()) and returns the configuration it
// made. The servers must run with reconfigEnabled=true, and the client
// needs the right to reconfigure (the super user, or the servers'
// skipACL); otherwise the error wraps zk.ErrReconfigDisabled or
// zk.ErrNoAuth. Options say what changes; none, or WithMembers together
// with Joining or Leaving, fail with ErrInvalidOption before anything is
// sent.
//
// Reconfig runs under the retry policy and honours ctx. A reconfiguration
// is not naturally idempotent: its reply can be lost with the connection
// (removing the leader, or the server the client is connected to, drops
// connections as the ensemble re-forms). So a retry that the server
// refuses is checked against the configuration: if it already has the
// requested members, the earlier attempt applied it and Reconfig
// succeeds. With the ensemble tracker on, the new configuration also
// becomes the servers the client reconnects to, at once. Measured as a
// set (of ConfigPath).
func (c *Client) Reconfig(ctx context.Context, opts ...ReconfigOption) (EnsembleConfig, error) {
	if c == nil {
		return EnsembleConfig{}, ErrNilClient
	}
	o := reconfigOptions{version: -1}
	for i, opt := range opts {
		if opt == nil {
			return EnsembleConfig{}, invalid("reconfig option %d is nil", i)
		}
		if err := opt(&o); err != nil {
			return EnsembleConfig{}, fmt.Errorf("reconfig: %w", err)
		}
	}
	incremental := len(o.joining) > 0 || len(o.leaving) > 0
	switch {
	case o.full && incremental:
		return EnsembleConfig{}, invalid("reconfig: WithMembers excludes Joining and Leaving")
	case o.full && len(o.members) == 0:
		return EnsembleConfig{}, invalid("reconfig: WithMembers without members")
	case !o.full && !incremental:
		return EnsembleConfig{}, invalid("reconfig: nothing to change")
	}
	var (
		data     []byte
		attempts int
	)
	err := c.do(ctx, clienttel.OpReconfig, func(conn *zk.Conn) error {
		attempts++
		var err error
		if o.full {
			_, err = conn.Reconfig(memberLines(o.members), o.version)
		} else {
			leaving := make([]string, len(o.leaving))
			for i, id := range o.leaving {
				leaving[i] = strconv.FormatInt(id, 10)
			}
			_, err = conn.IncrementalReconfig(memberLines(o.joining), leaving, o.version)
		}
		if err != nil && (attempts == 1 || retry.IsRetryable(err)) {
			return err
		}
		if err != nil {
			// A retry refused: was it applied by the attempt whose
			// reply was lost?
			d, _, gerr := conn.Get(ConfigPath)
			if gerr != nil {
				return gerr
			}
			cfg, perr := ParseConfig(d)
			if perr != nil || !o.appliedIn(cfg) {
				return err
			}
			data = d
			return nil
		}
		// The reply comes once the configuration is committed here, so
		// this read, on the same connection, sees it.
		data, _, err = conn.Get(ConfigPath)
		return err
	})
	if err != nil {
		return EnsembleConfig{}, fmt.Errorf("reconfig: %w", err)
	}
	cfg, err := ParseConfig(data)
	if err != nil {
		return EnsembleConfig{}, fmt.Errorf("reconfig: %w", err)
	}
	c.trackConfig(cfg)
	return cfg, nil
}

// appliedIn reports whether cfg already has what o asks for.
func (o *reconfigOptions) appliedIn(cfg EnsembleConfig) bool {
	if o.full {
		if len(cfg.Members) != len(o.members) {
			return false
		}
		for _, m := range o.members {
			if !hasMember(cfg, m) {
				return false
			}
		}
		return true
	}
	for _, m := range o.joining {
		if !hasMember(cfg, m) {
			return false
		}
	}
	for _, id := range o.leaving {
		if _, ok := cfg.Member(id); ok {
			return false
		}
	}
	return true
}

// hasMember reports whether cfg has m with m's addresses and role.
func hasMember(cfg EnsembleConfig, m Member) bool {
	got, ok := cfg.Member(m.ID)
	if !ok {
		return false
	}
	return got.Host == m.Host && got.QuorumPort == m.QuorumPort && got.ElectionPort == m.ElectionPort &&
		got.Role == m.Role && got.ClientPort == m.ClientPort &&
		(got.ClientHost == m.ClientHost || m.ClientHost == "" && ensemble.IsWildcard(got.ClientHost))
}

func memberLines(ms []Member) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.String()
	}
	return out
}
