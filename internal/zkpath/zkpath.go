// Package zkpath holds ZooKeeper's path rules and Curator's connect
// string, as pure functions: what is wrong with a path (the rules of
// ZooKeeper's PathUtils), joining and splitting paths, and the servers and
// chroot of "host:port[,host:port...][/chroot]". framework's ValidatePath,
// JoinPath, SplitPath and Connect are built on it, and so is
// internal/oneshot. It depends on the standard library only.
package zkpath

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Problem says what is wrong with p by the rules of framework's
// ValidatePath (documented there), "" if nothing: the reason alone, for
// callers that name the input their own way.
func Problem(p string) string {
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

// Join joins a parent path and a child name.
func Join(parent, child string) string {
	if parent == "/" {
		return "/" + child
	}
	return parent + "/" + child
}

// Split returns the parent and the last segment of a valid path.
func Split(p string) (parent, name string) {
	i := strings.LastIndexByte(p, '/')
	if i <= 0 {
		return "/", p[i+1:]
	}
	return p[:i], p[i+1:]
}

// Parent returns the parent of a valid path, "" for "/".
func Parent(p string) string {
	if p == "/" {
		return ""
	}
	parent, _ := Split(p)
	return parent
}

// SplitChroot splits a connect string into its hosts and its chroot
// (from the first '/'; "" when there is none, or it is "/"). The chroot
// is not checked.
func SplitChroot(s string) (hosts, chroot string) {
	i := strings.IndexByte(s, '/')
	if i < 0 {
		return s, ""
	}
	hosts, chroot = s[:i], s[i:]
	if chroot == "/" {
		chroot = ""
	}
	return hosts, chroot
}

// ParseHosts returns the servers of a connect string's comma-separated
// hosts as host:port (port 2181 when a host has none), or why it cannot.
func ParseHosts(hosts string) (servers []string, why string) {
	if strings.TrimSpace(hosts) == "" {
		return nil, "no servers"
	}
	for _, h := range strings.Split(hosts, ",") {
		h = strings.TrimSpace(h)
		host, port, err := net.SplitHostPort(h)
		if err != nil {
			if !strings.Contains(h, ":") && h != "" {
				host, port = h, "2181"
			} else {
				return nil, err.Error()
			}
		}
		if host == "" {
			return nil, "empty host"
		}
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return nil, "bad port " + strconv.Quote(port)
		}
		if strings.ContainsAny(host, " \t\x00") {
			return nil, "bad host " + strconv.Quote(host)
		}
		servers = append(servers, net.JoinHostPort(host, port))
	}
	return servers, ""
}
