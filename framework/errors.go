package framework

import "errors"

// Sentinel errors, matched with errors.Is. ZooKeeper's own errors (zk.ErrNoNode,
// zk.ErrNodeExists, zk.ErrBadVersion, zk.ErrNoAuth, ...) are returned wrapped,
// so errors.Is works for them too.
var (
	// ErrClosed is returned by every call made after Close, and by calls that
	// were waiting when Close ran.
	ErrClosed = errors.New("curator: client closed")
	// ErrInvalidPath is returned for a path that ZooKeeper would reject:
	// empty, relative, with a trailing slash, an empty, "." or ".." segment,
	// or a NUL or control character.
	ErrInvalidPath = errors.New("curator: invalid path")
	// ErrInvalidConnectString is returned by Connect for a connect string
	// that is not host:port[,host:port...][/chroot].
	ErrInvalidConnectString = errors.New("curator: invalid connect string")
	// ErrInvalidOption is returned for an option with an out-of-range value
	// (a zero or negative timeout, a nil policy, ...).
	ErrInvalidOption = errors.New("curator: invalid option")
)
