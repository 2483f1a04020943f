package framework

import (
	"fmt"
	"strings"

	"github.com/gocurator/curator/internal/zkpath"
)

// ValidatePath reports whether p is a path ZooKeeper accepts, with the rules
// of ZooKeeper's PathUtils: absolute, no trailing slash (except "/"), no
// empty, "." or ".." segment, valid UTF-8, and none of NUL, the control
// characters U+0001-U+001F and U+007F-U+009F, U+D800-U+F8FF and
// U+FFF0-U+FFFF. PathUtils checks Java chars, UTF-16 code units, so it also
// rejects every character beyond U+FFFF (an emoji such as U+1F600, say): in
// UTF-16 it is a surrogate pair, in U+D800-U+DFFF. The error wraps
// ErrInvalidPath. It does not check the path's length: a request too large
// for the server is refused with ErrDataTooLarge.
func ValidatePath(p string) error {
	if why := zkpath.Problem(p); why != "" {
		return fmt.Errorf("%w %q: %s", ErrInvalidPath, p, why)
	}
	return nil
}

// JoinPath joins a parent path and a child name.
func JoinPath(parent, child string) string { return zkpath.Join(parent, child) }

// SplitPath returns the parent and the last segment of a valid path.
func SplitPath(p string) (parent, name string) { return zkpath.Split(p) }

// parseConnectString splits Curator's host:port[,host:port...][/chroot].
func parseConnectString(s string) (servers []string, chroot string, err error) {
	bad := func(why string) error { return fmt.Errorf("%w %q: %s", ErrInvalidConnectString, s, why) }
	hosts, chroot := zkpath.SplitChroot(s)
	if chroot != "" {
		if err := ValidatePath(chroot); err != nil {
			return nil, "", bad("chroot: " + err.Error())
		}
	}
	servers, why := zkpath.ParseHosts(hosts)
	if why != "" {
		return nil, "", bad(why)
	}
	return servers, chroot, nil
}

// full turns a caller's path into the server's path.
func (c *Client) full(p string) string {
	if c.prefix == "" {
		return p
	}
	if p == "/" {
		return c.prefix
	}
	return c.prefix + p
}

// strip turns a server path back into the caller's path.
func (c *Client) strip(p string) string {
	if c.prefix == "" || !strings.HasPrefix(p, c.prefix) {
		return p
	}
	if len(p) == len(c.prefix) {
		return "/"
	}
	return p[len(c.prefix):]
}
