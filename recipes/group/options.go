package group

import (
	"go.uber.org/zap"

	"github.com/gocurator/curator/recipes/node"
)

// Option configures a Member.
type Option func(*options)

type options struct {
	// node holds the options of the member's Node. Default none: an
	// ephemeral node, container parents, Start waiting out a second
	// owner.
	node []node.Option
	// log is the logger. Default nil: the client's, named "group".
	log *zap.Logger
}

// WaitForOwner makes Start wait while another session holds a member node
// with this id (this process restarted before its old session expired,
// say), until that node goes. It is the default (it undoes FailIfOwned);
// see node.WaitForOwner.
func WaitForOwner() Option {
	return func(o *options) { o.node = append(o.node, node.WaitForOwner()) }
}

// FailIfOwned makes Start fail at once with ErrOwnedByOtherSession while
// another session holds a member node with this id, instead of waiting for
// it to go. See node.FailIfOwned.
func FailIfOwned() Option {
	return func(o *options) { o.node = append(o.node, node.FailIfOwned()) }
}

// TakeOver makes Start delete a member node with this id held by another
// session and make ours, as Curator's GroupMember does (it adopts it): a
// restarted process joins without waiting for its old session to expire.
// Only safe when no other live process uses the id. See node.TakeOver.
func TakeOver() Option {
	return func(o *options) { o.node = append(o.node, node.TakeOver()) }
}

// WithLogger sets the logger (default: the client's, named "group").
func WithLogger(log *zap.Logger) Option { return func(o *options) { o.log = log } }
