package framework

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"

	"github.com/gocurator/curator/connstate"
	"github.com/gocurator/curator/internal/clock"
	"github.com/gocurator/curator/internal/zkpath"
	"github.com/gocurator/curator/retry"
)

// Option configures Connect.
type Option func(*options) error

type options struct {
	// sessionTimeout is the session timeout asked of the server; the server
	// clamps it to its [minSessionTimeout, maxSessionTimeout]. Curator's
	// default is 60s.
	sessionTimeout time.Duration
	// connectionTimeout bounds Connect when ctx has no earlier deadline.
	// Curator's default is 15s.
	connectionTimeout time.Duration
	// retryPolicy governs every operation. Curator's recipes default to an
	// exponential backoff; ours is 100ms base, 10 retries.
	retryPolicy retry.Policy
	// namespace is prepended to every path (after the chroot); "" for none.
	namespace string
	// logger receives the client's and go-zookeeper's logs; no-op by default.
	logger *zap.Logger
	// errorPolicy decides which states end lock holds: StandardPolicy.
	errorPolicy connstate.ErrorPolicy
	// auth is added to every session, in order.
	auth []authInfo
	// aclProvider gives the ACL of every created node: open (world:anyone).
	aclProvider ACLProvider
	// defaultData is used by Create when data is nil: the local IP, as Curator.
	defaultData []byte
	// dialer makes connections to servers: net.DialTimeout.
	dialer zk.Dialer
	// expiryPercent of the negotiated session timeout after the send of the
	// last answered request makes the client report Lost (at most 90).
	expiryPercent int
	// juteMaxBuffer is the largest request the servers read (their
	// jute.maxbuffer): larger ones are refused before they are sent.
	// ZooKeeper's default, 0xfffff bytes.
	juteMaxBuffer int
	// ensemble is ensemble tracking (ensemble_options.go): off.
	ensemble ensembleOptions
	// meterProvider and tracerProvider receive the client's metrics and
	// spans (telemetry.go); nil: OpenTelemetry's global providers.
	meterProvider  metric.MeterProvider
	tracerProvider trace.TracerProvider
	// clock times the client-side expiry: the send times of requests and
	// the watchdog's timer. The wall clock; internal tests set a fake.
	clock clock.Clock
	// compression is the codec of compressed writes and reads: Gzip.
	compression Compression
	// compressAll compresses every write and decompresses every read
	// unless a call says Uncompressed: off, as in Curator.
	compressAll bool
	// circuit, when set, puts every listener behind a circuit breaker
	// under it (circuit.go): none, as in Curator.
	circuit retry.Policy
	// noKeepalive turns the keepalive's pings off (keepalive.go): for
	// internal tests of the watchdog alone, on a fake clock.
	noKeepalive bool
}

type authInfo struct {
	scheme string
	auth   []byte
}

func defaultOptions() options {
	return options{
		sessionTimeout:    60 * time.Second,
		connectionTimeout: 15 * time.Second,
		retryPolicy:       retry.ExponentialBackoff(100*time.Millisecond, 10),
		logger:            zap.NewNop(),
		errorPolicy:       connstate.StandardPolicy{},
		aclProvider:       OpenACL(),
		defaultData:       localIP(),
		expiryPercent:     maxExpiryPercent,
		juteMaxBuffer:     DefaultJuteMaxBuffer,
		clock:             clock.Real,
		compression:       Gzip(),
	}
}

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalidOption}, args...)...)
}

// WithSessionTimeout sets the session timeout asked of the server (default
// 60s). The server may negotiate it into its own bounds; the negotiated value
// drives client-side expiry. d must be positive.
func WithSessionTimeout(d time.Duration) Option {
	return func(o *options) error {
		if d <= 0 {
			return invalid("session timeout %v must be positive", d)
		}
		o.sessionTimeout = d
		return nil
	}
}

// WithConnectionTimeout bounds how long Connect waits for the first session
// when ctx has no earlier deadline (default 15s). d must be positive.
func WithConnectionTimeout(d time.Duration) Option {
	return func(o *options) error {
		if d <= 0 {
			return invalid("connection timeout %v must be positive", d)
		}
		o.connectionTimeout = d
		return nil
	}
}

// WithRetryPolicy sets the policy every operation retries under (default:
// ExponentialBackoff(100ms, 10)). p must not be nil nor invalid (see
// retry.Validate).
func WithRetryPolicy(p retry.Policy) Option {
	return func(o *options) error {
		if p == nil {
			return invalid("nil retry policy")
		}
		if err := retry.Validate(p); err != nil {
			return invalid("retry policy: %w", err)
		}
		o.retryPolicy = p
		return nil
	}
}

// WithNamespace prefixes every path with the namespace ns. The namespace
// node is created lazily, as a container, the first time a create needs it.
// ns is a path with or without its leading slash: "app", "/app" and
// "app/locks" are valid; "" and "/" mean no namespace. Anything else that
// is not a valid path (see ValidatePath) once a leading slash is added,
// such as "app/", "//app" or "a/../b", makes Connect fail with an error
// wrapping ErrInvalidOption that names ns as written.
func WithNamespace(ns string) Option {
	return func(o *options) error {
		p := ns
		if !strings.HasPrefix(p, "/") {
			p = "/" + p
		}
		if p == "/" {
			o.namespace = ""
			return nil
		}
		if why := zkpath.Problem(p); why != "" {
			return invalid("namespace %q: %s", ns, why)
		}
		o.namespace = p
		return nil
	}
}

// WithLogger routes the client's logs, and go-zookeeper's, to l (default: a
// no-op logger). State changes log at Info, retries and watches at Debug.
func WithLogger(l *zap.Logger) Option {
	return func(o *options) error {
		if l == nil {
			return invalid("nil logger")
		}
		o.logger = l
		return nil
	}
}

// WithErrorPolicy sets which states end lock holds (default
// connstate.StandardPolicy{}: Suspended and Lost).
func WithErrorPolicy(p connstate.ErrorPolicy) Option {
	return func(o *options) error {
		if p == nil {
			return invalid("nil error policy")
		}
		o.errorPolicy = p
		return nil
	}
}

// WithAuth adds credentials to every session the client makes, before any
// operation runs; for digest, auth is "user:password". May be repeated.
func WithAuth(scheme string, auth []byte) Option {
	return func(o *options) error {
		if scheme == "" {
			return invalid("empty auth scheme")
		}
		o.auth = append(o.auth, authInfo{scheme: scheme, auth: append([]byte(nil), auth...)})
		return nil
	}
}

// WithACLProvider sets the provider of the ACL of every created node,
// including parents and namespace (default: OpenACL).
func WithACLProvider(p ACLProvider) Option {
	return func(o *options) error {
		if p == nil {
			return invalid("nil ACL provider")
		}
		o.aclProvider = p
		return nil
	}
}

// WithDefaultData sets the data Create writes when it is given nil data
// (default: the local IP address as text, as Curator does).
func WithDefaultData(data []byte) Option {
	return func(o *options) error {
		o.defaultData = append([]byte{}, data...)
		return nil
	}
}

// WithDialer sets how connections to servers are made, for TLS or proxies.
func WithDialer(d zk.Dialer) Option {
	return func(o *options) error {
		if d == nil {
			return invalid("nil dialer")
		}
		o.dialer = d
		return nil
	}
}

// WithSessionExpiryPercent sets when the client reports Lost on its own,
// without waiting to hear it from a server: once pct percent of the
// negotiated session timeout has passed since it sent the last request that
// a server answered (default 90). The server cannot expire the session
// sooner than the full timeout after that send, so the rest is a margin in
// which holds end before anyone else can be given their locks. pct must be
// in [1, 100]; values above 90 are treated as 90, so the margin is never
// less than a tenth of the timeout. Unlike Curator's
// simulatedSessionExpirationPercent, which counts from the moment the
// client noticed the disconnect (go-zookeeper notices only after two thirds
// of the timeout of silence), this counts from what the server last heard.
func WithSessionExpiryPercent(pct int) Option {
	return func(o *options) error {
		if pct < 1 || pct > 100 {
			return invalid("session expiry percent %d not in [1, 100]", pct)
		}
		o.expiryPercent = pct
		return nil
	}
}

// WithJuteMaxBuffer sets the largest request, in bytes, the client sends
// (default DefaultJuteMaxBuffer, 0xfffff). It must match the jute.maxbuffer
// system property of the servers (java -Djute.maxbuffer=n): a server closes
// the connection of a client that sends a larger request, which would end
// every lock hold of the client, so the client refuses such a request
// before sending it, with ErrDataTooLarge. The size of a request counts its
// data, path, ACL and framing (a Multi counts all its operations), so the
// largest node data that passes is n less a few dozen bytes. go-zookeeper's
// send buffer is sized to n+4 bytes (at least 129 KiB), so a request over
// the limit made on Conn() fails with zk.ErrShortBuffer, unsent. Below 128
// KiB, go-zookeeper's setting of many watches again after a reconnect (in
// packets of up to 128 KiB) can exceed the limit. n must be positive and
// less than 2 GiB.
func WithJuteMaxBuffer(n int) Option {
	return func(o *options) error {
		if n <= 0 || n > math.MaxInt32-4 {
			return invalid("jute.maxbuffer %d not in [1, %d]", n, math.MaxInt32-4)
		}
		o.juteMaxBuffer = n
		return nil
	}
}
