package framework

import (
	"errors"
	"slices"
	"testing"

	"github.com/go-zookeeper/zk"
)

// Curator's tracker bugs, as the addresses a configuration line must give
// clients: never the wildcard (CURATOR-384/402), never the quorum port
// when there is no client port (CURATOR-392), host names as configured
// rather than resolved (CURATOR-638/664).
func TestMemberClientAddr(t *testing.T) {
	tests := []struct {
		name, line, want string
	}{
		{"client address as written", "server.1=127.0.0.1:2888:3888:participant;127.0.0.1:2181", "127.0.0.1:2181"},
		{"wildcard client address takes the quorum host (CURATOR-384/402)", "server.1=10.0.0.1:2888:3888:participant;0.0.0.0:2181", "10.0.0.1:2181"},
		{"IPv6 wildcard", "server.1=[fe80::1]:2888:3888;[::]:2181", "[fe80::1]:2181"},
		{"port only takes the quorum host", "server.2=zk2:2888:3888;2181", "zk2:2181"},
		{"no client port: not the quorum port (CURATOR-392)", "server.3=zk3:2888:3888:participant", ""},
		{"DNS name kept (CURATOR-638)", "server.4=zk4.example.com:2888:3888:observer;zk4.example.com:2181", "zk4.example.com:2181"},
		{"wildcard with a DNS quorum host keeps the name (CURATOR-664)", "server.5=zk5.example.com:2888:3888;0.0.0.0:2181", "zk5.example.com:2181"},
		{"client name preferred to a quorum IP", "server.6=10.0.0.6:2888:3888;zk6.example.com:2181", "zk6.example.com:2181"},
		{"several quorum addresses: the first", "server.7=a:2888:3888|b:2888:3888;0.0.0.0:2181", "a:2181"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := ParseMember(tt.line)
			if err != nil {
				t.Fatal(err)
			}
			if got := m.ClientAddr(); got != tt.want {
				t.Fatalf("ClientAddr() = %q, want %q", got, tt.want)
			}
			// String gives a line that parses back to the same member.
			again, err := ParseMember(m.String())
			if err != nil || again != m {
				t.Fatalf("ParseMember(%q) = %+v, %v; want %+v", m.String(), again, err, m)
			}
		})
	}
}

func TestParseMemberBad(t *testing.T) {
	for _, line := range []string{
		"",
		"version=1",
		"server.x=h:1:2",
		"server.0=h:1:2",
		"server.1=h",
		"server.1=h:1",
		"server.1=h:1:2:leader",
		"server.1=h:1:2:participant:x",
		"server.1=h:0:2",
		"server.1=h:1:70000",
		"server.1=:1:2",
		"server.1=[::1:1:2",
		"server.1=h:1:2;h:0",
		"server.1=h:1:2;h:x",
		"server.1=h:1:2;a:b:c",
	} {
		if m, err := ParseMember(line); !errors.Is(err, ErrBadConfig) {
			t.Errorf("ParseMember(%q) = %+v, %v; want ErrBadConfig", line, m, err)
		}
	}
}

func TestParseConfig(t *testing.T) {
	data := []byte("server.3=127.0.0.1:3:33:participant;127.0.0.1:3333\n" +
		"server.1=127.0.0.1:1:11:participant;0.0.0.0:1111\n" +
		"server.2=127.0.0.1:2:22:observer\n" +
		"version=10000000a\n")
	cfg, err := ParseConfig(data)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Version != 0x10000000a {
		t.Errorf("Version = %#x", cfg.Version)
	}
	if got, want := cfg.Servers(), []string{"127.0.0.1:1111", "127.0.0.1:3333"}; !slices.Equal(got, want) {
		t.Errorf("Servers() = %v, want %v (id order, no member without a client port)", got, want)
	}
	if got := cfg.ConnectString(); got != "127.0.0.1:1111,127.0.0.1:3333" {
		t.Errorf("ConnectString() = %q", got)
	}
	if m, ok := cfg.Member(2); !ok || m.Role != "observer" {
		t.Errorf("Member(2) = %+v, %v", m, ok)
	}
	if _, ok := cfg.Member(4); ok {
		t.Error("Member(4) found")
	}
	if cfg, err := ParseConfig(nil); err != nil || len(cfg.Members) != 0 || cfg.Version != 0 {
		t.Errorf("empty configuration (a standalone server's) = %+v, %v", cfg, err)
	}
	if _, err := ParseConfig([]byte("version=zz\n")); !errors.Is(err, ErrBadConfig) {
		t.Errorf("bad version: %v", err)
	}
}

// Config and Reconfig refuse bad input before anything is sent, and a
// server without reconfiguration says so.
func TestReconfigBadInput(t *testing.T) {
	ctx := testCtx(t)
	c := connectNS(t, newNamespace(t))
	tests := []struct {
		name string
		opts []ReconfigOption
	}{
		{"nothing", nil},
		{"nil option", []ReconfigOption{nil}},
		{"full and incremental", []ReconfigOption{WithMembers("server.1=h:1:2;3"), Leaving(2)}},
		{"full without members", []ReconfigOption{WithMembers()}},
		{"bad joining line", []ReconfigOption{Joining("server.4=h")}},
		{"bad member line", []ReconfigOption{WithMembers("host:2181")}},
		{"leaving id 0", []ReconfigOption{Leaving(0)}},
		{"negative version", []ReconfigOption{Leaving(2), FromConfig(-1)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := c.Reconfig(ctx, tt.opts...); !errors.Is(err, ErrInvalidOption) {
				t.Fatalf("Reconfig = %v, want ErrInvalidOption", err)
			}
		})
	}
	if _, err := c.Reconfig(ctx, Leaving(5)); !errors.Is(err, zk.ErrReconfigDisabled) {
		t.Fatalf("Reconfig on a server without reconfigEnabled = %v, want zk.ErrReconfigDisabled", err)
	}
	cfg, err := c.Config(ctx)
	if err != nil || len(cfg.Members) != 0 {
		t.Fatalf("Config of a standalone server = %+v, %v; want no members", cfg, err)
	}
	var nilClient *Client
	if _, err := nilClient.Reconfig(ctx, Leaving(1)); !errors.Is(err, ErrNilClient) {
		t.Fatalf("nil Reconfig = %v", err)
	}
}
