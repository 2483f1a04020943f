package framework

import (
	"context"
	"errors"
)

// Sentinel errors, matched with errors.Is. ZooKeeper's own errors (zk.ErrNoNode,
// zk.ErrNodeExists, zk.ErrBadVersion, zk.ErrNoAuth, ...) are returned wrapped,
// so errors.Is works for them too.
var (
	// ErrClosed is returned by every call made after Close, and by calls that
	// were waiting when Close ran.
	ErrClosed = errors.New("curator: client closed")
	// ErrInvalidPath is returned for a path that ZooKeeper would reject:
	// empty, relative, with a trailing slash, an empty, "." or ".." segment,
	// a NUL or control character, or a character ZooKeeper reserves
	// (U+D800-U+F8FF, U+FFF0-U+FFFF, and everything beyond U+FFFF, which
	// Java holds as a surrogate pair).
	ErrInvalidPath = errors.New("curator: invalid path")
	// ErrInvalidConnectString is returned by Connect for a connect string
	// that is not host:port[,host:port...][/chroot].
	ErrInvalidConnectString = errors.New("curator: invalid connect string")
	// ErrInvalidOption is returned for an option with an out-of-range value
	// (a zero or negative timeout, a nil policy, ...).
	ErrInvalidOption = errors.New("curator: invalid option")
	// ErrDataTooLarge is returned, before anything is sent, for a request
	// larger than the server reads: its data, path, ACL or, for Multi, the
	// whole transaction make a packet over jute.maxbuffer (see
	// WithJuteMaxBuffer). A server closes the connection on such a packet,
	// which would end every lock hold of the client; refusing it locally
	// keeps the connection. The error says how large the request is and how
	// much data would fit.
	ErrDataTooLarge = errors.New("curator: request larger than jute.maxbuffer")
	// ErrAuthFailed is returned by Connect when the server refuses the
	// credentials of WithAuth (an unknown scheme, for example), wrapping
	// the server's error. If the credentials are refused on a later
	// connection the client makes (the new session after a client-side
	// expiry), operations fail with it rather than run without them.
	ErrAuthFailed = errors.New("curator: authentication failed")
	// ErrNilClient is returned by the calls of a nil *Client that would
	// talk to ZooKeeper, and by Close. A nil client is safe to call: it
	// has no session (SessionID 0, Session's Done closed, SessionAlive
	// false), Done and StateChanged are closed, Guard calls its function
	// at once as for a closed client, and the getters return defaults.
	// Recipes made with a nil client report it from every call.
	ErrNilClient = errors.New("curator: nil client")
	// ErrNilHandle is returned by the calls of a nil recipe handle (a nil
	// *mutex.Mutex, say) that would act on ZooKeeper: Acquire, TryAcquire,
	// Participants and the like. Every handle type treats a nil receiver
	// alike: such calls return ErrNilHandle, Release returns the recipe's
	// ErrNotHeld, and the queries report nothing held (Err ErrNotHeld, Done
	// closed, IsHeld false, FencingToken 0, Node ""). Nothing panics.
	ErrNilHandle = errors.New("curator: nil handle")
	// ErrLayoutMismatch is returned by a recipe that finds another
	// recipe's znode layout at work on its path (a V1 semaphore beside a
	// V2 one, a mutex beside a read/write lock, a LeaderLatch beside a
	// LeaderSelector, a barrier beside a double barrier, a counter beside
	// a shared value, a queue beside another kind): two layouts on one
	// path count differently, so each would admit or decide on its own.
	// The recipe refuses instead, leaves nothing behind, and wraps this
	// sentinel with what it found. Recipe packages re-export it.
	ErrLayoutMismatch = errors.New("curator: path holds another recipe's layout")
	// ErrConnectTimeout is returned by Connect when the connection timeout
	// (WithConnectionTimeout, 15s by default) passes with no session while
	// the caller's ctx is still live; it also matches
	// context.DeadlineExceeded, as timeouts here are contexts. When the
	// caller's ctx ends first, Connect returns ctx's error instead. Either
	// way the error also carries the last dial error of each server that
	// could not be reached (errors.Is(err, syscall.ECONNREFUSED) works).
	ErrConnectTimeout error = connectTimeout{}
)

// connectTimeout is ErrConnectTimeout: a type of its own so that it also
// matches context.DeadlineExceeded without saying so in every message.
type connectTimeout struct{}

func (connectTimeout) Error() string { return "curator: connection timeout" }

func (connectTimeout) Is(target error) bool { return target == context.DeadlineExceeded }
