package framework

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/internal/telemetry/clienttel"
	"github.com/gocurator/curator/internal/zkwire"
)

// ACLProvider gives the ACL of nodes the client creates.
type ACLProvider interface {
	// ACLForPath returns the ACL for a node about to be created at path
	// (the path as the caller gave it, without namespace).
	ACLForPath(path string) []zk.ACL
}

// ACLProviderFunc adapts a function to ACLProvider.
type ACLProviderFunc func(path string) []zk.ACL

// ACLForPath calls f.
func (f ACLProviderFunc) ACLForPath(path string) []zk.ACL { return f(path) }

// OpenACL gives every node world:anyone with all permissions, ZooKeeper's
// OPEN_ACL_UNSAFE and Curator's default.
func OpenACL() ACLProvider {
	acl := zk.WorldACL(zk.PermAll)
	return ACLProviderFunc(func(string) []zk.ACL { return acl })
}

// CreatorACL gives every node all permissions for its creator only
// (ZooKeeper's CREATOR_ALL_ACL); the client needs credentials, see WithAuth.
func CreatorACL() ACLProvider {
	acl := zk.AuthACL(zk.PermAll)
	return ACLProviderFunc(func(string) []zk.ACL { return acl })
}

// GetACL returns the node's ACL and its Stat (Aversion is the ACL's
// version, for SetACL); zk.ErrNoNode (wrapped) if the node is missing. It
// runs under the retry policy, with the namespace applied, like every
// read.
func (c *Client) GetACL(ctx context.Context, path string) ([]zk.ACL, *zk.Stat, error) {
	if c == nil {
		return nil, nil, ErrNilClient
	}
	if err := ValidatePath(path); err != nil {
		return nil, nil, err
	}
	if err := c.checkSize("get ACL", zkwire.ReadSize(c.full(path)), 0); err != nil {
		return nil, nil, fmt.Errorf("get ACL %s: %w", path, err)
	}
	var (
		acl  []zk.ACL
		stat *zk.Stat
	)
	err := c.do(ctx, clienttel.OpGetACL, func(conn *zk.Conn) error {
		a, st, err := conn.GetACL(c.full(path))
		acl, stat = a, st
		return err
	})
	if err != nil {
		return nil, nil, fmt.Errorf("get ACL %s: %w", path, err)
	}
	return acl, stat, nil
}

// SetACL replaces the node's ACL if its ACL version (Stat.Aversion, not the
// data version) is version (-1: any), and returns the node's new Stat. A
// version mismatch is zk.ErrBadVersion (wrapped); an ACL the caller is not
// allowed to change, zk.ErrNoAuth; an ACL naming a scheme the server does
// not know, zk.ErrInvalidACL. acl must not be empty. It runs under the retry
// policy. A set whose reply was lost was applied, so its retry with a
// version meets zk.ErrBadVersion: on a retry, a node at ACL version
// version+1 whose ACL is acl as the server stores it is taken as that
// earlier attempt's success. The server stores acl rewritten: repeated
// entries dropped, and an "auth" entry (zk.AuthACL, the creator) replaced
// by an entry for each id the client authenticated as (WithAuth); the
// comparison makes the same rewrite, and ignores order. When ctx ends, the
// call returns ctx's error at once and a request already sent may still be
// applied: an ACL change cannot be taken back; a caller that must know
// waits for the reply with a ctx that ends later.
func (c *Client) SetACL(ctx context.Context, path string, acl []zk.ACL, version int32) (*zk.Stat, error) {
	if c == nil {
		return nil, ErrNilClient
	}
	if err := ValidatePath(path); err != nil {
		return nil, err
	}
	if len(acl) == 0 {
		return nil, invalid("empty ACL")
	}
	if version < -1 {
		return nil, invalid("ACL version %d", version)
	}
	if err := c.checkSize("set ACL", zkwire.ReqHeaderSize+zkwire.StrSize(c.full(path))+zkwire.ACLSize(acl)+4, 0); err != nil {
		return nil, fmt.Errorf("set ACL %s: %w", path, err)
	}
	var (
		stat  *zk.Stat
		tries atomic.Int32
	)
	err := c.do(ctx, clienttel.OpSetACL, func(conn *zk.Conn) error {
		retried := tries.Add(1) > 1
		full := c.full(path)
		st, err := conn.SetACL(full, acl, version)
		if errors.Is(err, zk.ErrBadVersion) && retried && version >= 0 {
			// A lost reply of our own earlier attempt? The server stores
			// acl rewritten, so that is what the node is compared with.
			if got, cur, gerr := conn.GetACL(full); gerr == nil && cur.Aversion == version+1 && c.storedAs(got, acl) {
				st, err = cur, nil
			}
		}
		stat = st
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("set ACL %s: %w", path, err)
	}
	return stat, nil
}

// storedAs reports whether got, an ACL read from the server, is what the
// server stores for a SetACL or create of sent by this client. The server
// rewrites the list (ZooKeeper's fixupACL): repeated entries are dropped,
// and an "auth" entry becomes one entry with its permissions for each id
// the connection has authenticated as (the digest of each digest
// credential of WithAuth). So the two are compared as sets, after that
// rewrite. An id this client cannot compute (a credential of another
// scheme) matches any entry of that scheme with an "auth" entry's
// permissions.
func (c *Client) storedAs(got, sent []zk.ACL) bool {
	want := make(map[zk.ACL]bool, len(sent))
	var authPerms []int32
	for _, a := range sent {
		if a.Scheme == "auth" {
			authPerms = append(authPerms, a.Perms)
			continue
		}
		want[a] = true
	}
	var opaque []string // schemes whose ids are the server's to say
	for _, p := range authPerms {
		for _, ai := range c.opts.auth {
			if user, pass, ok := strings.Cut(string(ai.auth), ":"); ok && ai.scheme == "digest" {
				want[zk.DigestACL(p, user, pass)[0]] = true
				continue
			}
			opaque = append(opaque, ai.scheme)
		}
	}
	seen := make(map[zk.ACL]bool, len(want))
	for _, a := range got {
		switch {
		case want[a]:
			seen[a] = true
		case slices.Contains(opaque, a.Scheme) && slices.Contains(authPerms, a.Perms):
		default:
			return false
		}
	}
	return len(seen) == len(want)
}

// sameACL reports whether a and b grant the same, in any order.
func sameACL(a, b []zk.ACL) bool {
	if len(a) != len(b) {
		return false
	}
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	return true
}
