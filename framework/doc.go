// Package framework is a ZooKeeper client with Apache Curator's semantics,
// on github.com/go-zookeeper/zk: every operation retries under a policy and
// honours its context, paths are namespaced, protected creation survives a
// lost reply, deletes can be guaranteed, and connection states reach
// listeners in order.
//
// # Connecting
//
// Connect takes Curator's connect string, host:port[,host:port...][/chroot],
// and returns once a session is established. go-zookeeper has no chroot, so
// the chroot is applied on the client side together with the namespace
// (WithNamespace): every path given to the client is prefixed, every path it
// returns (created names, watch events, transaction results) is stripped.
// The namespace and chroot nodes are created lazily, as containers.
//
// # Connection states
//
// The client turns go-zookeeper's session events into connstate.State:
// the first session is Connected; a disconnect is Suspended; getting back on
// the same session is Reconnected; an expired session is Lost, followed by
// Reconnected on the new session. The server only reports an expiry after a
// reconnect, so the client also declares Lost itself (client-side expiry):
// the server cannot expire the session sooner than the negotiated timeout
// after the last request of ours it answered was sent, so once 90% of that
// time (WithSessionExpiryPercent) has passed with no newer answer, the
// client reports Suspended and Lost, even if go-zookeeper has not noticed
// the silence yet, and replaces its connection so that the next session is
// surely a new one. A silently partitioned holder is therefore told before
// the server can give its lock away, under either error policy. Listeners
// (Listen) get every state in order on their own goroutines; nothing runs on
// go-zookeeper's event goroutine, and its small event channel is not used, so
// no event is dropped.
//
// # Operations
//
// Create, Delete, Exists, Get, Set, Children (each read also with a watch
// variant) and Multi take a context and run under the client's retry policy
// (WithRetryPolicy): only connection loss, operation timeouts, session expiry
// and session moves are retried; everything else returns at once, wrapped,
// so errors.Is(err, zk.ErrNoNode) works. When the context ends, the call
// returns its error at once.
//
// Create's options follow Curator's builder: WithMode (including Container
// and the TTL modes), Protected, CreatingParents, CreatingParentContainers,
// WithACL, WithTTL. A Protected create names the node "_c_<uuid>-<name>";
// after a connection loss it looks for the UUID before creating again, so a
// create applied on the server whose reply was lost is found, not repeated;
// an ephemeral node found from a dead session is deleted and made again; and
// if the create finally fails or is cancelled, a background task deletes
// whatever node it may have left.
//
// Delete's options: WithVersion, Guaranteed (keep deleting in the background
// until it succeeds or the client closes), DeletingChildren, Quietly.
//
// # Watches that last
//
// Watch watches a node, or with Recursive a subtree, with one persistent
// watch on the server (ZooKeeper 3.6+ AddWatch, which go-zookeeper lacks:
// the client writes it on go-zookeeper's socket itself) and delivers its
// changes on a channel, in order, with a WatchResync marker after every
// reconnection and new session; a slow consumer gets each path's last
// change, never a blocked client. It is the primitive the recipes that are
// not locks build on. Sync is the read barrier. Unwatch gives back a
// one-shot watch its caller abandoned. docs/framework.md explains the wire
// layer and the server's rules (ZOOKEEPER-4466, ZOOKEEPER-4475) it keeps.
//
// # Security
//
// WithAuth adds credentials to every session before any operation runs,
// including sessions made after an expiry; WithACLProvider (for example
// CreatorACL) sets the ACL of every node the client creates. Credentials the
// server refuses fail Connect with ErrAuthFailed; refused on a later session,
// they make every operation fail with ErrAuthFailed rather than run without
// them.
//
// # Request size
//
// A server closes the connection on a request over its jute.maxbuffer
// (0xfffff bytes by default), which would suspend the client and end its
// holds. The client sizes each request first and refuses one over the limit
// with ErrDataTooLarge, unsent: node data, a whole Multi, paths, credentials.
// WithJuteMaxBuffer sets the limit to match servers run with another one.
//
// # Closing
//
// Close first ends every recipe's hold (Done closes, Err is ErrClosed; see
// Guard), then ends the session, so ephemeral nodes go at once, and stops
// every goroutine the client started, background deletes included, and
// closes its sockets. Every call after Close returns ErrClosed. Close may
// be called from a state listener.
package framework
