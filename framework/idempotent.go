package framework

import (
	"bytes"
	"errors"

	"github.com/go-zookeeper/zk"
)

// IdempotentOption is an option of Create, Set and Delete.
type IdempotentOption interface {
	CreateOption
	SetOption
	DeleteOption
}

type idempotentOption struct{}

func (idempotentOption) applyCreate(o *createOptions) error { o.idempotent = true; return nil }
func (idempotentOption) applySet(o *setOptions) error       { o.idempotent = true; return nil }
func (idempotentOption) applyDelete(o *deleteOptions) error { o.quietly = true; return nil }

// Idempotent makes a write succeed when the server already holds its effect,
// as Curator 5's idempotent() does; it is meant for writes that are retried
// after a lost reply (the server applied the first attempt, the client never
// heard), which otherwise fail with the error of the second:
//
//   - Create: a zk.ErrNodeExists is a success when the node's data is the
//     data this create writes (after compression). Its mode and ACL are not
//     compared. Sequential creates never meet an existing node; use
//     Protected for them.
//   - Set with a version v: a zk.ErrBadVersion is a success when the node
//     is at version v+1 and holds this set's data; the returned Stat is the
//     node's. A Set with version -1 is idempotent already.
//   - Delete: a missing node is a success, as with Quietly (Curator's
//     idempotent delete is its quietly).
//
// The check costs one read, only when the write fails that way. It cannot
// tell our write from another client's identical one: both mean the node is
// as the caller wants it.
func Idempotent() IdempotentOption { return idempotentOption{} }

// OrSetData makes Create set the node's data when the node exists, instead
// of failing with zk.ErrNodeExists (Curator 5's create().orSetData()): the
// set is made only if the node's version is version (-1: any), and fails
// with zk.ErrBadVersion otherwise. Create then returns path. With
// StoringStatIn, the Stat is the one the set returned. Modes and ACLs of an
// existing node are left as they are; sequential modes never meet an
// existing node.
func OrSetData(version int32) CreateOption {
	return createOption(func(o *createOptions) error {
		if version < -1 {
			return invalid("OrSetData version %d", version)
		}
		o.orSet, o.orSetVer = true, version
		return nil
	})
}

// existing handles the zk.ErrNodeExists err of a create of path (with data,
// on conn) as OrSetData and Idempotent say: it returns path and the node's
// Stat when the node is now as the caller wants it, and otherwise an error
// (err itself, when the node is someone else's).
func (c *Client) existing(conn *zk.Conn, path string, data []byte, o *createOptions, err error) (string, *zk.Stat, error) {
	full := c.full(path)
	if o.orSet {
		st, serr := conn.Set(full, data, o.orSetVer)
		if serr != nil {
			// zk.ErrNoNode: deleted since; the caller creates it again.
			return "", nil, serr
		}
		return path, st, nil
	}
	got, st, gerr := conn.Get(full)
	switch {
	case errors.Is(gerr, zk.ErrNoNode):
		return "", nil, err
	case gerr != nil:
		return "", nil, gerr
	case !bytes.Equal(got, data):
		return "", nil, err
	}
	return path, st, nil
}

// setOnce makes one attempt of Set: with Idempotent, a zk.ErrBadVersion is
// a success when the node holds this set's data at the version after the
// expected one (Curator's idempotentSetMatches).
func (c *Client) setOnce(conn *zk.Conn, path string, data []byte, version int32, o *setOptions) (*zk.Stat, error) {
	full := c.full(path)
	st, err := conn.Set(full, data, version)
	if err == nil || !o.idempotent || !errors.Is(err, zk.ErrBadVersion) {
		return st, err
	}
	got, cur, gerr := conn.Get(full)
	if gerr != nil {
		return nil, gerr
	}
	if cur.Version == version+1 && bytes.Equal(got, data) {
		return cur, nil
	}
	return nil, err
}
