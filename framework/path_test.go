package framework

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/internal/protname"
)

func TestValidatePath(t *testing.T) {
	tests := []struct {
		name string
		path string
		ok   bool
	}{
		{"root", "/", true},
		{"simple", "/a", true},
		{"nested", "/locks/orders", true},
		{"dots inside names", "/a.b/..c/c..", true},
		{"unicode", "/zäh/日本", true},
		{"empty", "", false},
		{"relative", "a/b", false},
		{"trailing slash", "/a/", false},
		{"double slash", "/a//b", false},
		{"dot segment", "/a/./b", false},
		{"dotdot segment", "/a/../b", false},
		{"final dot", "/a/.", false},
		{"final dotdot", "/..", false},
		{"NUL", "/a\x00b", false},
		{"control char", "/a\x01b", false},
		{"newline", "/a\nb", false},
		{"DEL", "/a\x7fb", false},
		{"C1 control", "/a\u0085b", false},
		{"reserved range", "/a\ue000b", false},
		{"specials", "/a\ufff0b", false},
		{"invalid utf8", "/a\xffb", false},
		// ZooKeeper checks Java chars, UTF-16 code units: a character
		// beyond U+FFFF is a surrogate pair, in the reserved U+D800-U+F8FF.
		{"outside the BMP (emoji)", "/a\U0001F600b", false},
		{"first supplementary character", "/\U00010000", false},
		{"last code point", "/\U0010FFFF", false},
		{"emoji in a parent", "/\U0001F600/b", false},
		{"just below the surrogates", "/\ud7ff", true},
		{"first reserved", "/\ue000", false},
		{"last reserved", "/\uf8ff", false},
		{"just after the reserved range", "/\uf900", true},
		{"just below the specials", "/\uffef", true},
		{"last BMP character", "/\uffff", false},
		{"space", "/a b", true},
		{"NBSP after the C1 controls", "/\u00a0", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ValidatePath(tt.path)
			if tt.ok && err != nil {
				t.Fatalf("ValidatePath(%q) = %v, want nil", tt.path, err)
			}
			if !tt.ok && !errors.Is(err, ErrInvalidPath) {
				t.Fatalf("ValidatePath(%q) = %v, want ErrInvalidPath", tt.path, err)
			}
		})
	}
}

func FuzzValidatePath(f *testing.F) {
	for _, s := range []string{"/", "/a", "/a/b", "", "a", "/a/", "//", "/./", "/a\x00", "/日本/x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		err := ValidatePath(p)
		if err != nil {
			if !errors.Is(err, ErrInvalidPath) {
				t.Fatalf("error %v does not wrap ErrInvalidPath", err)
			}
			return
		}
		// Whatever is accepted is absolute, has no empty or relative
		// segment and no NUL: the properties the server relies on.
		if p[0] != '/' || strings.Contains(p, "//") || strings.ContainsRune(p, 0) {
			t.Fatalf("accepted bad path %q", p)
		}
		if p != "/" {
			for _, seg := range strings.Split(p[1:], "/") {
				if seg == "" || seg == "." || seg == ".." {
					t.Fatalf("accepted bad segment in %q", p)
				}
			}
		}
		parent, name := SplitPath(p)
		if p != "/" && JoinPath(parent, name) != p {
			t.Fatalf("SplitPath/JoinPath round trip of %q gave %q", p, JoinPath(parent, name))
		}
	})
}

func TestParseConnectString(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		servers []string
		chroot  string
		ok      bool
	}{
		{"one", "127.0.0.1:2181", []string{"127.0.0.1:2181"}, "", true},
		{"several with chroot", "a:1,b:2/app/x", []string{"a:1", "b:2"}, "/app/x", true},
		{"default port", "zk1", []string{"zk1:2181"}, "", true},
		{"ipv6", "[::1]:2181", []string{"[::1]:2181"}, "", true},
		{"root chroot", "a:1/", []string{"a:1"}, "", true},
		{"spaces", " a:1 , b:2 ", []string{"a:1", "b:2"}, "", true},
		{"empty", "", nil, "", false},
		{"only chroot", "/app", nil, "", false},
		{"empty host", ":2181", nil, "", false},
		{"bad port", "a:port", nil, "", false},
		{"port zero", "a:0", nil, "", false},
		{"port too big", "a:70000", nil, "", false},
		{"empty entry", "a:1,,b:2", nil, "", false},
		{"bad chroot", "a:1/app/", nil, "", false},
		{"chroot with dotdot", "a:1/../x", nil, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			servers, chroot, err := parseConnectString(tt.in)
			if !tt.ok {
				if !errors.Is(err, ErrInvalidConnectString) {
					t.Fatalf("err = %v, want ErrInvalidConnectString", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(servers, ",") != strings.Join(tt.servers, ",") || chroot != tt.chroot {
				t.Fatalf("got %v %q, want %v %q", servers, chroot, tt.servers, tt.chroot)
			}
		})
	}
}

func TestProtectedNames(t *testing.T) {
	tests := []struct {
		name string
		in   string
		ok   bool
		rest string
	}{
		{"curator form", "_c_37b3ce00-bf16-4fa6-8519-db89479745b6-lock-0000000001", true, "lock-0000000001"},
		{"go-zookeeper form is not recognised", "_c_37b3ce00bf164fa68519db89479745b6-lock-0000000001", false, ""},
		{"too short", "_c_37b3ce00-bf16-4fa6-8519-db89479745b6-", false, ""},
		{"no prefix", "xx37b3ce00-bf16-4fa6-8519-db89479745b6-lock-1", false, ""},
		{"bad uuid", "_c_zzzzzzzz-bf16-4fa6-8519-db89479745b6-lock-1", false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := IsProtected(tt.in); got != tt.ok {
				t.Fatalf("IsProtected = %v, want %v", got, tt.ok)
			}
			if tt.ok {
				if got := StripProtected(tt.in); got != tt.rest {
					t.Fatalf("StripProtected = %q, want %q", got, tt.rest)
				}
			}
		})
	}
	if ProtectedPrefix != protname.Prefix {
		t.Fatalf("ProtectedPrefix %q, protname.Prefix %q", ProtectedPrefix, protname.Prefix)
	}
}

func TestModes(t *testing.T) {
	tests := []struct {
		m        Mode
		eph, seq bool
		name     string
	}{
		{Persistent, false, false, "Persistent"},
		{Ephemeral, true, false, "Ephemeral"},
		{PersistentSequential, false, true, "PersistentSequential"},
		{EphemeralSequential, true, true, "EphemeralSequential"},
		{Container, false, false, "Container"},
		{PersistentWithTTL, false, false, "PersistentWithTTL"},
		{PersistentSequentialWithTTL, false, true, "PersistentSequentialWithTTL"},
		{Mode(99), false, false, "Mode(99)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.m.IsEphemeral() != tt.eph || tt.m.IsSequential() != tt.seq || tt.m.String() != tt.name {
				t.Fatalf("%v: ephemeral %v sequential %v", tt.m, tt.m.IsEphemeral(), tt.m.IsSequential())
			}
		})
	}
}

// ValidatePath agrees with the server, character by character around the
// edges of every range ZooKeeper's PathUtils rejects. The raw creates go in
// a transaction, which go-zookeeper sends without checking the path itself,
// so the verdict is the server's.
func TestValidatePathMatchesServer(t *testing.T) {
	ns := newNamespace(t)
	c := connectNS(t, ns)
	ctx := testCtx(t)
	if _, err := c.Create(ctx, "/p", nil); err != nil {
		t.Fatal(err)
	}
	chars := []rune{
		0x01, 0x1f, 0x20, 0x7e, 0x7f, 0x9f, 0xa0,
		0xd7ff, 0xe000, 0xf000, 0xf8ff, 0xf900,
		0xffef, 0xfff0, 0xfffd, 0xffff,
		0x10000, 0x1f600, 0x10ffff,
	}
	for _, r := range chars {
		name := fmt.Sprintf("U+%04X", r)
		t.Run(name, func(t *testing.T) {
			p := "/p/x" + string(r) + "y"
			local := ValidatePath(p)
			if local != nil && !errors.Is(local, ErrInvalidPath) {
				t.Fatalf("ValidatePath(%q) = %v, want nil or ErrInvalidPath", p, local)
			}
			_, serverErr := c.Conn().Multi(&zk.CreateRequest{Path: "/" + ns + p, Data: []byte{}, Acl: zk.WorldACL(zk.PermAll)})
			if serverErr != nil && !errors.Is(serverErr, zk.ErrBadArguments) {
				t.Fatalf("the server's create of %q = %v, want success or zk.ErrBadArguments", p, serverErr)
			}
			if (local == nil) != (serverErr == nil) {
				t.Fatalf("%s: ValidatePath says %v, the server says %v", name, local, serverErr)
			}
			if local != nil {
				// Every operation refuses it, with ErrInvalidPath.
				if _, err := c.Create(ctx, p, nil); !errors.Is(err, ErrInvalidPath) {
					t.Fatalf("Create(%q) = %v, want ErrInvalidPath", p, err)
				}
			}
		})
	}
}
