package cache

import (
	"fmt"

	"github.com/go-zookeeper/zk"
)

// Node is a cached znode.
type Node struct {
	// Path is the node's full path, as the caller names it (namespace
	// stripped).
	Path string
	// Data is the node's data (uncompressed with CompressedData; nil with
	// StatsOnly). It is shared with the cache and must not be modified.
	Data []byte
	// Stat is the node's Stat as of the cache's last read of it. Czxid,
	// Mzxid, Version and the times follow every change; the children
	// fields (Cversion, NumChildren, Pzxid) are those of the last read,
	// which a child's creation or deletion alone does not cause: count
	// the children with Children.
	Stat zk.Stat
}

// EventType is what happened to the cache.
type EventType int

const (
	// Created: a node was added to the cache (it was created, or found
	// by a load or a resync).
	Created EventType = iota + 1
	// Changed: a cached node's data changed (Event.Old is the node
	// before).
	Changed
	// Deleted: a node left the cache (Event.Node is the node as it was
	// cached). A subtree leaves deepest node first.
	Deleted
	// Initialized: the initial load is done; exactly once, after the
	// Created events of the nodes the load found.
	Initialized
	// Resynced: after a reconnection, a new session or a detected fault
	// (Event.Reason), the cache was read again and matches the server
	// once more; the Created, Changed and Deleted events of what changed
	// meanwhile came before it.
	Resynced
	// Unreadable: a node exists but the client may not read it
	// (Event.Err wraps zk.ErrNoAuth). It is not cached; it is tried again
	// at its next change or the next resync, never in a loop.
	Unreadable
)

var eventNames = [...]string{"", "created", "changed", "deleted", "initialized", "resynced", "unreadable"}

func (t EventType) String() string {
	if t > 0 && int(t) < len(eventNames) {
		return eventNames[t]
	}
	return fmt.Sprintf("EventType(%d)", int(t))
}

// ResyncReason says why the cache was read again.
type ResyncReason int

const (
	// Reconnected: the client reconnected to its session; changes made
	// while it was disconnected were not reported by the server.
	Reconnected ResyncReason = iota + 1
	// NewSession: the client's session was lost and a new one made.
	NewSession
	// OutOfTree: the server reported a change outside the cached tree
	// (ClickHouse Keeper reports the watched path, say); the cache does
	// not trust the events it had and read everything again.
	OutOfTree
)

var reasonNames = [...]string{"", "reconnected", "new-session", "out-of-tree"}

func (r ResyncReason) String() string {
	if r > 0 && int(r) < len(reasonNames) {
		return reasonNames[r]
	}
	return fmt.Sprintf("ResyncReason(%d)", int(r))
}

// Event is one change of the cache, as a listener (Listen) gets it.
type Event struct {
	Type EventType
	// Path is the node's path; the cache's root for Initialized and
	// Resynced.
	Path string
	// Node is the node after the change (Created, Changed), or as it was
	// cached (Deleted).
	Node Node
	// Old is the node before the change (Changed).
	Old Node
	// Reason is why the cache resynced (Resynced).
	Reason ResyncReason
	// Coalesced is set when the listener was slower than the changes:
	// this event stands for several of Path, of which it gives the
	// outcome (a node created and changed is reported Created with the
	// last data; one created and deleted meanwhile, not at all).
	Coalesced bool
	// Err is set on Unreadable (zk.ErrNoAuth) and on the Created or
	// Changed event of a node whose data could not be uncompressed
	// (ErrNotCompressed).
	Err error
}
