package framework

import "github.com/go-zookeeper/zk"

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
