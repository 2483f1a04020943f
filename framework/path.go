package framework

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"unicode/utf8"
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
	if why := pathProblem(p); why != "" {
		return fmt.Errorf("%w %q: %s", ErrInvalidPath, p, why)
	}
	return nil
}

// pathProblem says what is wrong with p by the rules of ValidatePath, ""
// if nothing: the reason alone, for callers that name the input their own
// way (WithNamespace names what the user wrote, not the path made of it).
func pathProblem(p string) string {
	switch {
	case p == "":
		return "empty"
	case p[0] != '/':
		return "not absolute"
	case p == "/":
		return ""
	case p[len(p)-1] == '/':
		return "trailing slash"
	case !utf8.ValidString(p):
		return "not UTF-8"
	}
	for rest := p[1:]; ; {
		seg, after, more := strings.Cut(rest, "/")
		switch seg {
		case "":
			return "empty segment"
		case ".", "..":
			return "relative segment " + seg
		}
		if !more {
			break
		}
		rest = after
	}
	for _, r := range p {
		switch {
		case r == 0:
			return "NUL character"
		case r < 0x20, r >= 0x7f && r <= 0x9f:
			return "control character"
		case r >= 0xd800 && r <= 0xf8ff, r >= 0xfff0 && r <= 0xffff:
			return fmt.Sprintf("reserved character %U", r)
		case r > 0xffff:
			return fmt.Sprintf("character %U outside the Basic Multilingual Plane (a UTF-16 surrogate pair, which ZooKeeper rejects)", r)
		}
	}
	return ""
}

// JoinPath joins a parent path and a child name.
func JoinPath(parent, child string) string {
	if parent == "/" {
		return "/" + child
	}
	return parent + "/" + child
}

// SplitPath returns the parent and the last segment of a valid path.
func SplitPath(p string) (parent, name string) {
	i := strings.LastIndexByte(p, '/')
	if i <= 0 {
		return "/", p[i+1:]
	}
	return p[:i], p[i+1:]
}

// parseConnectString splits Curator's host:port[,host:port...][/chroot].
func parseConnectString(s string) (servers []string, chroot string, err error) {
	bad := func(why string) error { return fmt.Errorf("%w %q: %s", ErrInvalidConnectString, s, why) }
	hosts := s
	if i := strings.IndexByte(s, '/'); i >= 0 {
		hosts, chroot = s[:i], s[i:]
		if chroot == "/" {
			chroot = ""
		} else if err := ValidatePath(chroot); err != nil {
			return nil, "", bad("chroot: " + err.Error())
		}
	}
	if strings.TrimSpace(hosts) == "" {
		return nil, "", bad("no servers")
	}
	for _, h := range strings.Split(hosts, ",") {
		h = strings.TrimSpace(h)
		host, port, err := net.SplitHostPort(h)
		if err != nil {
			if !strings.Contains(h, ":") && h != "" {
				host, port = h, "2181"
			} else {
				return nil, "", bad(err.Error())
			}
		}
		if host == "" {
			return nil, "", bad("empty host")
		}
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return nil, "", bad("bad port " + strconv.Quote(port))
		}
		if strings.ContainsAny(host, " \t\x00") {
			return nil, "", bad("bad host " + strconv.Quote(host))
		}
		servers = append(servers, net.JoinHostPort(host, port))
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

// parentOf is the parent of a server path ("" for "/").
func parentOf(path string) string {
	if path == "/" {
		return ""
	}
	parent, _ := SplitPath(path)
	return parent
}
