package inspect

import "time"

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
	// Owner is the ephemeral owner: the session of an ephemeral node, 0
	// for any other (ZooKeeper shows 0 for containers and TTL nodes too, so
	// a client cannot tell them from persistent nodes).
	Owner       int64
	NumChildren int32
	// Cversion counts changes to the children: above 0, the node has had
	// children (a parent, not a leaf).
	Cversion int32
	// Version is the data version: a delete or set made with it fails if
	// the node was written since it was read.
	Version  int32
	Children []*Znode
	// Loaded is true when Children holds every child.
	Loaded bool
}

// IsEphemeral reports whether the node belongs to a session.
func (z *Znode) IsEphemeral() bool { return z.Owner != 0 }

// IsEmptyParent reports whether the node is an empty directory: no data,
// no children now, and children once (its cversion counts their creations
// and deletions). Lock directories left behind look like this.
func (z *Znode) IsEmptyParent() bool {
	return !z.IsEphemeral() && z.NumChildren == 0 && len(z.Children) == 0 && z.Cversion > 0 && len(z.Data) == 0
}

// Child returns the loaded child called name, or nil.
func (z *Znode) Child(name string) *Znode {
	for _, c := range z.Children {
		if c.Name == name {
			return c
		}
	}
	return nil
}
