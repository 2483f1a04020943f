package clienttel

import (
	"context"
	"errors"

	"github.com/go-zookeeper/zk"
	"go.opentelemetry.io/otel/attribute"

	"github.com/gocurator/curator/connstate"
)

// Op is the operation of a request, the operation attribute of its
// metrics and the name of its span.
type Op uint8

// The operations, in the order docs/observability.md lists them.
const (
	OpCreate Op = iota
	OpDelete
	OpExists
	OpGet
	OpSet
	OpChildren
	OpMulti
	OpCleanup // finding and deleting the node of a failed protected create
	OpSync
	OpWatch // adding or removing a persistent watch (internal/zkconn)
	OpGetACL
	OpSetACL
	OpReconfig
	numOps
)

var opNames = [numOps]string{"create", "delete", "exists", "get", "set", "children", "multi", "cleanup", "sync", "watch", "get_acl", "set_acl", "reconfig"}

// String returns the operation attribute's value.
func (o Op) String() string { return opNames[o] }

// Result is the outcome of a request, its result attribute: a small fixed
// set, so the attribute's cardinality is bounded.
type Result uint8

// The results.
const (
	ResOK Result = iota
	ResNoNode
	ResNodeExists
	ResBadVersion
	ResNotEmpty
	ResConnectionLoss
	ResSessionExpired
	ResCanceled
	ResDeadline
	ResClosed // the client was closed: framework says so, ResultOf cannot
	ResError
	numResults
)

var resultNames = [numResults]string{"ok", "no_node", "node_exists", "bad_version", "not_empty",
	"connection_loss", "session_expired", "canceled", "deadline", "closed", "error"}

// String returns the result attribute's value.
func (r Result) String() string { return resultNames[r] }

// ResultOf maps a request's error to its result. It does not know the
// client's ErrClosed: the caller checks for it first (ResClosed).
func ResultOf(err error) Result {
	switch {
	case err == nil:
		return ResOK
	case errors.Is(err, context.Canceled):
		return ResCanceled
	case errors.Is(err, context.DeadlineExceeded):
		return ResDeadline
	case errors.Is(err, zk.ErrNoNode):
		return ResNoNode
	case errors.Is(err, zk.ErrNodeExists):
		return ResNodeExists
	case errors.Is(err, zk.ErrBadVersion):
		return ResBadVersion
	case errors.Is(err, zk.ErrNotEmpty):
		return ResNotEmpty
	case errors.Is(err, zk.ErrSessionExpired):
		return ResSessionExpired
	case errors.Is(err, zk.ErrConnectionClosed):
		return ResConnectionLoss
	default:
		return ResError
	}
}

// Expiry is where a session expiry was noticed.
type Expiry uint8

// The sources of an expiry.
const (
	ExpiryClient Expiry = iota // the client-side watchdog declared it
	ExpiryServer               // a server said so
	numExpiries
)

// Attribute keys of the client's metrics and spans.
const (
	attrOperation    = attribute.Key("curator.operation")
	attrResult       = attribute.Key("curator.result")
	attrState        = attribute.Key("curator.state")
	attrExpirySource = attribute.Key("curator.expiry.source")
)

// stateNames are the state attribute's values.
var stateNames = [connstate.ReadOnly + 1]string{
	connstate.Connected:   "connected",
	connstate.Suspended:   "suspended",
	connstate.Reconnected: "reconnected",
	connstate.Lost:        "lost",
	connstate.ReadOnly:    "read_only",
}
