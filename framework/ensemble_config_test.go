package framework

import (
	"errors"
	"slices"
	"testing"

	"github.com/go-zookeeper/zk"
)

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
