package inspect

import (
	"math"
	"time"
)

// Znode is what Load read of one node: its name, data and stat, and its
// children when they were read (Loaded).
type Znode struct {
	Name string
	Data []byte
	// Czxid is the zxid that created the node: a lock holder's fencing
	// token.
	Czxid int64
	// Ctime is when the node was created.
	Ctime time.Time
	// Owner is the ephemeral owner: the session of an ephemeral node, 0 for
	// a persistent one, ContainerOwner for a container.
	Owner       int64
	NumChildren int32
	// Cversion counts changes to the children: above 0, the node has had
	// children (a parent, not a leaf).
	Cversion int32
	Children []*Znode
	// Loaded is true when Children holds every child.
	Loaded bool
}

// ContainerOwner is the ephemeral owner ZooKeeper reports for a container
// node (Long.MIN_VALUE).
const ContainerOwner = math.MinInt64

// IsEphemeral reports whether the node belongs to a session.
func (z *Znode) IsEphemeral() bool {
	// TTL nodes carry 0xFF in the top byte; containers MinInt64.
	return z.Owner > 0
}

// IsPersistent reports whether the node is a plain persistent node (not a
// container, TTL or ephemeral node).
func (z *Znode) IsPersistent() bool { return z.Owner == 0 }

// Child returns the loaded child called name, or nil.
func (z *Znode) Child(name string) *Znode {
	for _, c := range z.Children {
		if c.Name == name {
			return c
		}
	}
	return nil
}
