package zkpath

import (
	"slices"
	"strings"
	"testing"
)

func TestProblem(t *testing.T) {
	for _, tt := range []struct {
		path string
		want string // a part of the problem, "" for none
	}{
		{"/", ""},
		{"/a/b", ""},
		{"/é", ""},
		{"", "empty"},
		{"a", "not absolute"},
		{"/a/", "trailing slash"},
		{"/a//b", "empty segment"},
		{"/a/./b", "relative segment ."},
		{"/a/..", "relative segment .."},
		{"/a\x00", "NUL"},
		{"/a\x01", "control"},
		{"/a\u0085", "control"},
		{"/a\ufff5", "reserved"},
		{"/a\U0001F600", "outside the Basic Multilingual Plane"},
		{"/a\xff", "not UTF-8"},
	} {
		t.Run(tt.path, func(t *testing.T) {
			got := Problem(tt.path)
			if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
				t.Fatalf("Problem(%q) = %q, want %q", tt.path, got, tt.want)
			}
		})
	}
}

func TestJoinSplitParent(t *testing.T) {
	for _, tt := range []struct {
		path, parent, name string
	}{
		{"/a", "/", "a"},
		{"/a/b", "/a", "b"},
		{"/a/b/c", "/a/b", "c"},
	} {
		t.Run(tt.path, func(t *testing.T) {
			parent, name := Split(tt.path)
			if parent != tt.parent || name != tt.name {
				t.Fatalf("Split(%q) = %q, %q", tt.path, parent, name)
			}
			if Join(parent, name) != tt.path || Parent(tt.path) != tt.parent {
				t.Fatalf("Join or Parent disagree with Split on %q", tt.path)
			}
		})
	}
	if Parent("/") != "" {
		t.Fatal(`Parent("/") is not ""`)
	}
}

func TestConnectString(t *testing.T) {
	for _, tt := range []struct {
		in      string
		servers []string
		chroot  string
		why     string // a part of the reason, "" for none
	}{
		{"h1:2181,h2:2182", []string{"h1:2181", "h2:2182"}, "", ""},
		{"h1", []string{"h1:2181"}, "", ""},
		{" h1:1 , [::1]:2/app", []string{"h1:1", "[::1]:2"}, "/app", ""},
		{"h1:1/", []string{"h1:1"}, "", ""},
		{"", nil, "", "no servers"},
		{" /app", nil, "/app", "no servers"},
		{"h1:0", nil, "", "bad port"},
		{":1", nil, "", "empty host"},
		{"h 1:1", nil, "", "bad host"},
		{"h1:1:2", nil, "", "too many colons"},
	} {
		t.Run(tt.in, func(t *testing.T) {
			hosts, chroot := SplitChroot(tt.in)
			servers, why := ParseHosts(hosts)
			if chroot != tt.chroot || !slices.Equal(servers, tt.servers) ||
				(tt.why == "") != (why == "") || !strings.Contains(why, tt.why) {
				t.Fatalf("%q: servers %q chroot %q why %q", tt.in, servers, chroot, why)
			}
		})
	}
}
