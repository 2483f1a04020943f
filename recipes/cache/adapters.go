package cache

import (
	"fmt"
	"sync/atomic"

	"github.com/gocurator/curator/framework"
)

// The adapters below turn a Curator-shaped listener into the function
// that Listen takes, for code ported from Curator: the callbacks keep
// their shape, and the event types print as Curator names them. They
// add nothing to Event: Unreadable events are not passed on (Curator has
// no such event), and the Curator type they map to is in docs/cache.md.

// Handlers is Curator's CuratorCacheListener.builder() as a struct: each
// field set is called for its events, the others are skipped. Pass
// Listener() to Listen:
//
//	cancel := ch.Listen(cache.Handlers{Creates: add, Deletes: remove}.Listener())
type Handlers struct {
	// Creates is called with each node added to the cache (forCreates).
	Creates func(node Node)
	// Changes is called with a node before and after each change of its
	// data (forChanges).
	Changes func(old, node Node)
	// CreatesAndChanges is called for both (forCreatesAndChanges); old is
	// the zero Node for a creation.
	CreatesAndChanges func(old, node Node)
	// Deletes is called with each node, as it was cached, once it has left
	// the cache (forDeletes).
	Deletes func(node Node)
	// Initialized is called once the initial load is done
	// (forInitialized).
	Initialized func()
	// AfterInitialized passes no node event on before Initialized
	// (afterInitialized()), so that the nodes found by the load are not
	// reported one by one. As in Curator, it needs the Initialized event:
	// a listener added after Start with it hears nothing.
	AfterInitialized bool
}

// Listener returns the function that calls h's fields, for Listen.
func (h Handlers) Listener() func(Event) {
	var ready atomic.Bool
	return func(ev Event) {
		switch ev.Type {
		case Initialized:
			ready.Store(true)
			if h.Initialized != nil {
				h.Initialized()
			}
			return
		case Created, Changed, Deleted:
			if h.AfterInitialized && !ready.Load() {
				return
			}
		}
		switch ev.Type {
		case Created:
			if h.Creates != nil {
				h.Creates(ev.Node)
			}
			if h.CreatesAndChanges != nil {
				h.CreatesAndChanges(Node{}, ev.Node)
			}
		case Changed:
			if h.Changes != nil {
				h.Changes(ev.Old, ev.Node)
			}
			if h.CreatesAndChanges != nil {
				h.CreatesAndChanges(ev.Old, ev.Node)
			}
		case Deleted:
			if h.Deletes != nil {
				h.Deletes(ev.Node)
			}
		}
	}
}

// ChildEventType is the type of a PathChildrenCacheEvent; String gives
// Curator's name.
type ChildEventType int

const (
	// ChildAdded is CHILD_ADDED: a child was added to the cache (Created).
	ChildAdded ChildEventType = iota + 1
	// ChildUpdated is CHILD_UPDATED: a child's data changed (Changed).
	ChildUpdated
	// ChildRemoved is CHILD_REMOVED: a child left the cache (Deleted).
	ChildRemoved
	// ChildrenInitialized is INITIALIZED (StartMode.POST_INITIALIZED_EVENT):
	// the initial load is done (Initialized).
	ChildrenInitialized
	// ChildrenReconnected is CONNECTION_RECONNECTED, sent here once the
	// cache matches the server again after a reconnection (Resynced).
	ChildrenReconnected
)

var childEventNames = [...]string{"", "CHILD_ADDED", "CHILD_UPDATED", "CHILD_REMOVED", "INITIALIZED", "CONNECTION_RECONNECTED"}

func (t ChildEventType) String() string {
	if t > 0 && int(t) < len(childEventNames) {
		return childEventNames[t]
	}
	return fmt.Sprintf("ChildEventType(%d)", int(t))
}

// ChildEvent is a PathChildrenCacheEvent.
type ChildEvent struct {
	Type ChildEventType
	// Node is the child after the change, or as it was cached
	// (ChildRemoved): Curator's getData(). Zero for ChildrenInitialized
	// and ChildrenReconnected.
	Node Node
	// Event is the cache's event, for what Curator does not have (Old,
	// Coalesced, Reason, Err).
	Event Event
}

// ForPathChildren is Curator's PathChildrenCacheListener (and
// CuratorCacheListenerBuilder.forPathChildrenCache): fn hears of the
// children of parent only, as CHILD_ADDED, CHILD_UPDATED and
// CHILD_REMOVED, then INITIALIZED and CONNECTION_RECONNECTED. Use it on
// a cache of parent made WithMaxDepth(1), the PathChildrenCache view. A
// nil fn gives a nil function, which Listen ignores.
func ForPathChildren(parent string, fn func(ChildEvent)) func(Event) {
	if fn == nil {
		return nil
	}
	return func(ev Event) {
		var t ChildEventType
		switch ev.Type {
		case Created:
			t = ChildAdded
		case Changed:
			t = ChildUpdated
		case Deleted:
			t = ChildRemoved
		case Initialized:
			fn(ChildEvent{Type: ChildrenInitialized, Event: ev})
			return
		case Resynced:
			fn(ChildEvent{Type: ChildrenReconnected, Event: ev})
			return
		default:
			return
		}
		if ev.Path == parent {
			return
		}
		if p, _ := framework.SplitPath(ev.Path); p != parent {
			return
		}
		fn(ChildEvent{Type: t, Node: ev.Node, Event: ev})
	}
}

// TreeEventType is the type of a TreeCacheEvent; String gives Curator's
// name.
type TreeEventType int

const (
	// NodeAdded is NODE_ADDED: a node was added to the cache (Created).
	NodeAdded TreeEventType = iota + 1
	// NodeUpdated is NODE_UPDATED: a node's data changed (Changed).
	NodeUpdated
	// NodeRemoved is NODE_REMOVED: a node left the cache (Deleted).
	NodeRemoved
	// TreeInitialized is INITIALIZED: the initial load is done
	// (Initialized).
	TreeInitialized
	// TreeReconnected is CONNECTION_RECONNECTED, sent here once the cache
	// matches the server again after a reconnection (Resynced).
	TreeReconnected
)

var treeEventNames = [...]string{"", "NODE_ADDED", "NODE_UPDATED", "NODE_REMOVED", "INITIALIZED", "CONNECTION_RECONNECTED"}

func (t TreeEventType) String() string {
	if t > 0 && int(t) < len(treeEventNames) {
		return treeEventNames[t]
	}
	return fmt.Sprintf("TreeEventType(%d)", int(t))
}

// TreeEvent is a TreeCacheEvent.
type TreeEvent struct {
	Type TreeEventType
	// Node is the node after the change, or as it was cached
	// (NodeRemoved): Curator's getData(). Zero for TreeInitialized and
	// TreeReconnected.
	Node Node
	// Old is the node before a NodeUpdated: Curator's getOldData().
	Old Node
	// Event is the cache's event, for what Curator does not have
	// (Coalesced, Reason, Err).
	Event Event
}

// ForTree is Curator's TreeCacheListener (and
// CuratorCacheListenerBuilder.forTreeCache): fn hears of every node as
// NODE_ADDED, NODE_UPDATED and NODE_REMOVED, then INITIALIZED and
// CONNECTION_RECONNECTED. A nil fn gives a nil function, which Listen
// ignores.
func ForTree(fn func(TreeEvent)) func(Event) {
	if fn == nil {
		return nil
	}
	return func(ev Event) {
		switch ev.Type {
		case Created:
			fn(TreeEvent{Type: NodeAdded, Node: ev.Node, Event: ev})
		case Changed:
			fn(TreeEvent{Type: NodeUpdated, Node: ev.Node, Old: ev.Old, Event: ev})
		case Deleted:
			fn(TreeEvent{Type: NodeRemoved, Node: ev.Node, Event: ev})
		case Initialized:
			fn(TreeEvent{Type: TreeInitialized, Event: ev})
		case Resynced:
			fn(TreeEvent{Type: TreeReconnected, Event: ev})
		}
	}
}

// ForNode is Curator's NodeCacheListener (and
// CuratorCacheListenerBuilder.forNodeCache): fn is called each time the
// node at path is created, changed or deleted (nodeChanged), with the
// node and whether it exists now (NodeCache.getCurrentData() != nil).
// Use it on a cache of path made SingleNode, the NodeCache view. A nil fn
// gives a nil function, which Listen ignores.
func ForNode(path string, fn func(node Node, exists bool)) func(Event) {
	if fn == nil {
		return nil
	}
	return func(ev Event) {
		if ev.Path != path {
			return
		}
		switch ev.Type {
		case Created, Changed:
			fn(ev.Node, true)
		case Deleted:
			fn(Node{Path: path}, false)
		}
	}
}
