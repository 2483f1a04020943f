package leader

import (
	"go.uber.org/zap"

	"github.com/gocurator/curator/connstate"
)

// Option configures an Election.
type Option func(*options)

type options struct {
	// id is the participant id, written into our node (UTF-8) and reported
	// by Participants and Leader. Default "" (Curator's default too): empty
	// data in the latch layout, the client's default data in the selector
	// layout (as Curator's LeaderSelector writes).
	id string
	// selector selects Curator's LeaderSelector layout ("lock-" nodes, the
	// mutex's). Default false: LeaderLatch's layout ("latch-" nodes).
	selector bool
	// telemetryName is WithTelemetryName's, "" for the election path.
	telemetryName string
	// policy decides which connection states end a term. Default nil: the
	// client's ErrorPolicy (framework.WithErrorPolicy).
	policy connstate.ErrorPolicy
	// log is the logger. Default nil: the client's, named "leader".
	log *zap.Logger
	// requeueOnError makes Run campaign again after fn returns an error.
	// Default false: Run returns fn's error, as it always has.
	requeueOnError bool
}

// WithID sets the participant id: the data of our node, which every
// participant (Go or Java) reads as the id of the leader and of the others.
// Default: "".
func WithID(id string) Option { return func(o *options) { o.id = id } }

// SelectorLayout selects Curator's LeaderSelector layout: the leader is the
// holder of an InterProcessMutex on the path, nodes
// "_c_<uuid>-lock-<seq>", with the id as data (the client's default data for
// an empty id). Without it the election uses Curator's LeaderLatch layout,
// nodes "_c_<uuid>-latch-<seq>". The two layouts do not mix on one path.
func SelectorLayout() Option { return func(o *options) { o.selector = true } }

// WithErrorPolicy sets which connection states end a term, overriding the
// client's ErrorPolicy for this election: connstate.StandardPolicy ends it
// on Suspended (no two leaders even across a partition, at the price of a
// new election after every connection blip), connstate.SessionPolicy only
// when the session is lost (a blip costs nothing, but a partitioned leader
// learns it is deposed only when the client declares its session expired).
// A term under an overriding policy costs a state listener and a goroutine
// more. nil keeps the client's policy.
func WithErrorPolicy(p connstate.ErrorPolicy) Option { return func(o *options) { o.policy = p } }

// WithLogger sets the logger (default: the client's, named "leader").
// Elections log term starts and ends at Info, requeues at Debug.
func WithLogger(log *zap.Logger) Option { return func(o *options) { o.log = log } }

// RequeueOnError makes Run behave as Curator's LeaderSelector with
// autoRequeue when its function fails: if fn returns an error while the
// term is still live, Run logs the error at Warn (with the election's
// logger), resigns, pauses and campaigns again instead of returning the
// error. The pause doubles from 50 ms to at most 2 s while fn keeps
// failing, as Run's pauses after failed campaigns do, and starts again at
// 50 ms after a term whose function returned nil. Run then returns only when
// ctx ends, the client closes or a campaign fails for good (an invalid path,
// no permission). Without it (the default) Run resigns and returns fn's
// error. An error fn returns after its term ended is no failure of fn and
// is never logged: Run campaigns again with or without this option.
// Start's Latch has no function and is not affected.
func RequeueOnError() Option { return func(o *options) { o.requeueOnError = true } }

// WithTelemetryName sets the name under which the election's metrics and spans
// are recorded (the curator.lock.name attribute; default: the lock path).
// Give locks whose paths are made per entity (/locks/order-1234) one name
// shared by all of them, such as "orders": every distinct name is a series
// of each metric.
func WithTelemetryName(name string) Option { return func(o *options) { o.telemetryName = name } }
