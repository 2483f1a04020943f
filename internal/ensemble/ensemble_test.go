package ensemble

import (
	"errors"
	"slices"
	"testing"
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
	tests := []struct {
		name    string
		data    string
		ids     []int64
		version int64
		bad     bool
	}{
		{"id order, version in hex",
			"server.3=127.0.0.1:3:33:participant;127.0.0.1:3333\n" +
				"server.1=127.0.0.1:1:11:participant;0.0.0.0:1111\n" +
				"server.2=127.0.0.1:2:22:observer\n" +
				"version=10000000a\n", []int64{1, 2, 3}, 0x10000000a, false},
		{"empty: a standalone server's", "", nil, 0, false},
		{"other lines ignored", "clientPort=2181\n# comment\nserver.1=h:1:2\n", []int64{1}, 0, false},
		{"bad version", "version=zz\n", nil, 0, true},
		{"bad server line", "server.1=h:1:2\nserver.2=h\n", nil, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			members, version, err := ParseConfig([]byte(tt.data))
			if tt.bad {
				if !errors.Is(err, ErrBadConfig) || members != nil || version != 0 {
					t.Fatalf("ParseConfig = %v, %d, %v; want nothing and ErrBadConfig", members, version, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var ids []int64
			for _, m := range members {
				ids = append(ids, m.ID)
			}
			if !slices.Equal(ids, tt.ids) || version != tt.version {
				t.Fatalf("ParseConfig = ids %v version %#x; want %v %#x", ids, version, tt.ids, tt.version)
			}
		})
	}
}

func TestIsWildcard(t *testing.T) {
	for _, tt := range []struct {
		host string
		want bool
	}{
		{"0.0.0.0", true}, {"::", true}, {"127.0.0.1", false}, {"zk1.example.com", false}, {"", false},
	} {
		t.Run(tt.host, func(t *testing.T) {
			if got := IsWildcard(tt.host); got != tt.want {
				t.Fatalf("IsWildcard(%q) = %v", tt.host, got)
			}
		})
	}
}
