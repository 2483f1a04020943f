package cache

import "fmt"

// Option configures a Cache.
type Option func(*options) error

type options struct {
	// maxDepth is the depth below the root that is cached: 0 the root
	// alone (SingleNode), 1 the root and its children; -1 (the default)
	// the whole subtree.
	maxDepth int
	// filter, if set, decides which nodes below the root are cached
	// (with their subtrees); default: all.
	filter func(path string) bool
	// statsOnly keeps each node's Stat but not its data (default: data
	// kept).
	statsOnly bool
	// compressed decodes each node's data with the client's codec
	// (default: data as stored, unless the client compresses by default).
	compressed bool
	// oneShot watches with one-shot watches even where the server has
	// persistent ones (default: persistent where available).
	oneShot bool
	// readsInFlight bounds the reads a load or resync has outstanding,
	// and the event loop's background reads (default 64): pipelined enough to hide the round trip, far from
	// the 65,535 at which Curator 5.4 loses nodes (CURATOR-690).
	readsInFlight int
	// loadSessions is how many sessions a load of the whole tree reads
	// over, the client's included; 0 (the default) is automatic: the
	// client's, and more once the tree proves large (autoLoad).
	loadSessions int
}

func defaults() options {
	return options{maxDepth: -1, readsInFlight: 64}
}

// SingleNode caches the root node alone, as Curator's NodeCache: its
// data and Stat, whether it exists or not, and no children.
func SingleNode() Option {
	return func(o *options) error { o.maxDepth = 0; return nil }
}

// WithMaxDepth caches the root and n levels below it: 0 is SingleNode,
// 1 the root and its children (PathChildrenCache's view), and so on. n
// must not be negative.
func WithMaxDepth(n int) Option {
	return func(o *options) error {
		if n < 0 {
			return fmt.Errorf("cache: max depth %d: %w", n, ErrInvalidOption)
		}
		o.maxDepth = n
		return nil
	}
}

// WithFilter caches only the nodes below the root for which keep returns
// true, and none below a node it refuses: Curator's TreeCacheSelector.
// keep gets full paths (as the caller names them) and must be quick and
// not call the cache; the root is always cached.
func WithFilter(keep func(path string) bool) Option {
	return func(o *options) error {
		if keep == nil {
			return fmt.Errorf("cache: nil filter: %w", ErrInvalidOption)
		}
		o.filter = keep
		return nil
	}
}

// StatsOnly keeps each node's Stat but not its data (Curator's
// setCacheData(false)): Node.Data is nil, Changed events report data
// changes by their Stat, and the cache reads with exists rather than
// getData.
func StatsOnly() Option {
	return func(o *options) error { o.statsOnly = true; return nil }
}

// CompressedData decompresses every node's data as it is read, for nodes
// written with Curator's GzipCompressionProvider or framework.Compressed:
// Node.Data is the uncompressed data. The codec is the client's
// (framework.WithCompression; framework.Gzip by default, byte-compatible
// with Curator). A client made WithCompressionEnabled decompresses
// without this option. Empty data is kept as it is (parents made on the
// way are not compressed); a node whose data does not decode is cached
// as stored, and its event's Err wraps ErrNotCompressed and
// framework.ErrCompression.
func CompressedData() Option {
	return func(o *options) error { o.compressed = true; return nil }
}

// OneShotWatches makes the cache watch with one-shot watches, two per
// node, as Curator's TreeCache does, even on a server with persistent
// watches (see framework.OneShot). The events are the same.
func OneShotWatches() Option {
	return func(o *options) error { o.oneShot = true; return nil }
}

// WithReadsInFlight bounds the reads a load or resync keeps outstanding,
// and the reads of changed nodes the cache has outstanding while it
// follows changes (default 64 each; one per path at a time). n must be
// positive.
func WithReadsInFlight(n int) Option {
	return func(o *options) error {
		if n < 1 {
			return fmt.Errorf("cache: %d reads in flight: %w", n, ErrInvalidOption)
		}
		o.readsInFlight = n
		return nil
	}
}

// maxLoadSessions bounds WithLoadSessions: ZooKeeper's maxClientCnxns
// allows 60 connections from one host by default.
const maxLoadSessions = 16

// WithLoadSessions spreads the reads of every load of the whole tree
// (Start's, a resync's, Synced's with one-shot watches) over n sessions:
// the client's and n-1 more like it (framework.Client.NewSession), opened
// when the load starts, synced with the server before their first read,
// and closed after it; each keeps WithReadsInFlight reads outstanding.
// ZooKeeper answers one session's requests one after another, so one
// session's load is bound by that pipeline, not by the round trip: a
// 100k-node tree through a 2 ms round trip loaded at 5.0-6.1k nodes/s
// over one session and 15.5-19.3k over four (docs/cache.md). Changes
// made during a load reach the cache by its watch, on the client's
// session, and are read there after the load, so the cache converges as
// with one session. The cost is n-1 connections for the length of the
// load (the server allows 60 per host by default); a session that
// cannot be opened is left out, with a warning. n must be from 1 to 16.
//
// Without this option the choice is automatic: a load starts on the
// client's session alone, and once it has found more than 1,000 nodes to
// read it opens up to 3 more for the rest of that load, within a budget
// of 8 such sessions open at once in the process (so many caches starting
// together do not exhaust the server's connections), and logs it at Info.
// A small tree never opens a connection; WithLoadSessions(1) never does.
func WithLoadSessions(n int) Option {
	return func(o *options) error {
		if n < 1 || n > maxLoadSessions {
			return fmt.Errorf("cache: %d load sessions (want 1 to %d): %w", n, maxLoadSessions, ErrInvalidOption)
		}
		o.loadSessions = n
		return nil
	}
}
