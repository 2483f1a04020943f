package group

import (
	"go.uber.org/zap"

	"github.com/gocurator/curator/recipes/node"
)

// Option configures a Member.
type Option func(*options)

type options struct {
	// node holds the options of the member's Node. Default none: an
	// ephemeral node, container parents, Start failing on a second owner.
	node []node.Option
	// log is the logger. Default nil: the client's, named "group".
	log *zap.Logger
}

// WaitForOwner makes Start wait while another session holds a member node
// with this id (this process restarted before its old session expired,
// say), until that node goes, instead of failing with
// ErrOwnedByOtherSession. See node.WaitForOwner.
func WaitForOwner() Option {
	return func(o *options) { o.node = append(o.node, node.WaitForOwner()) }
}

// WithLogger sets the logger (default: the client's, named "group").
func WithLogger(log *zap.Logger) Option { return func(o *options) { o.log = log } }
