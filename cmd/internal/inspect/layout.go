package inspect

import (
	"encoding/json"
	"strings"
)

// Kinds of recipe Identify names besides the lock kinds (KindMutex, ...).
const (
	KindGroup         = "group"             // Curator's GroupMember: ephemeral member nodes <p>/<id>
	KindService       = "service"           // service discovery: <p>/<instance id> nodes holding ServiceInstance JSON
	KindServices      = "service-discovery" // a base path: <p>/<service>/<instance id>
	KindCounter       = "counter"           // recipes/atomic: the value's node with writer-<uuid> children
	KindDoubleBarrier = "double-barrier"    // DistributedDoubleBarrier: member nodes and "ready"
	KindQueue         = "queue"             // DistributedQueue (and its id, priority and delay variants): queue- items
	KindQueueLock     = "queue-lock"        // DistributedQueue's lock path: ephemeral nodes named by the items in work
	KindSimpleQueue   = "simple-queue"      // SimpleDistributedQueue: qn- items
	KindQueueSharder  = "queue-sharder"     // QueueSharder: queue-<UUID> shards, each a distributed queue
)

// Parts: what a node is inside the recipe at its parent.
const (
	PartParticipant = "participant" // a lock, lease or latch node
	PartGate        = "gate"        // a V2 semaphore's locks/ directory (a mutex)
	PartLeases      = "leases"      // a V2 semaphore's leases/ directory
	PartMember      = "member"      // a group's or a double barrier's member node
	PartInstance    = "instance"    // a service's instance node
	PartService     = "service"     // a service under a discovery base path
	PartWriter      = "writer"      // a counter's writer-<uuid> node (a Go handle's, until it closes)
	PartReady       = "ready"       // a double barrier's ready node
	PartItem        = "item"        // a queue item, or its node in the queue's lock path
	PartShard       = "shard"       // a queue sharder's shard (a distributed queue)
)

// Layout is the recipe Identify found at a path.
type Layout struct {
	Path string `json:"path"`
	// Kind is "" when the node is no recipe this package knows.
	Kind string `json:"kind"`
	// Size counts the recipe's participants: lock and lease nodes,
	// members, instances, services, writers or items.
	Size int `json:"size"`
	// Parts maps the names of the children that are the recipe's nodes
	// to what each one is (PartParticipant, ...). Children it does not
	// map are foreign to the recipe, which ignores them.
	Parts map[string]string `json:"-"`
	// Locks is what Classify says of a lock kind.
	Locks []Lock `json:"-"`
}

// InUse reports whether the recipe has a participant now: one of its
// directories is then part of the recipe even while it is empty (a busy V2
// semaphore's gate, say).
func (l Layout) InUse() bool { return l.Size > 0 }

// recogniser recognises one family of layouts at path, whose node z has its
// children, and theirs, loaded. Identify tries them in order: the more
// specific first, a group (any ephemeral children) last.
type recogniser func(path string, z *Znode) (Layout, bool)

// recognisers are the layouts Identify knows. A new recipe adds its
// function here (and a Kind, and its Parts).
var recognisers = []recogniser{
	semaphoreV2Layout,
	lockLayout,
	counterLayout,
	queueLayout,
	sharderLayout,
	serviceLayout,
	servicesLayout,
	doubleBarrierLayout,
	groupLayout,
}

// Identify returns the recipe at path, whose node z was loaded with its
// children and theirs (Load with depth 2 or more); Kind is "" when none
// is recognised (a leaf, an empty directory, plain data). It is the one
// classifier every gocurator command asks.
func Identify(path string, z *Znode) Layout {
	if z == nil || !z.Loaded || z.IsEphemeral() || len(z.Children) == 0 {
		return Layout{Path: path}
	}
	for _, r := range recognisers {
		if l, ok := r(path, z); ok {
			l.Path = path
			return l
		}
	}
	return Layout{Path: path}
}

func semaphoreV2Layout(path string, z *Znode) (Layout, bool) {
	lock, ok := semaphoreV2(path, z)
	if !ok {
		return Layout{}, false
	}
	parts := map[string]string{}
	if z.Child(v2Leases) != nil {
		parts[v2Leases] = PartLeases
	}
	if z.Child(v2Locks) != nil {
		parts[v2Locks] = PartGate
	}
	return Layout{Kind: KindSemaphoreV2, Size: len(lock.Holders) + len(lock.Waiters), Parts: parts, Locks: []Lock{lock}}, true
}

func lockLayout(path string, z *Znode) (Layout, bool) {
	locks := Classify(path, z)
	if len(locks) == 0 {
		return Layout{}, false
	}
	l := Layout{Kind: locks[0].Kind, Parts: map[string]string{}, Locks: locks}
	for _, lk := range locks {
		for _, p := range append(append([]Participant{}, lk.Holders...), lk.Waiters...) {
			l.Parts[p.Name()] = PartParticipant
			l.Size++
		}
	}
	return l, true
}

// writerPrefix starts the name of a counter's writer node.
const writerPrefix = "writer-"

// IsWriterName reports whether name is a recipes/atomic writer node's,
// "writer-<uuid>".
func IsWriterName(name string) bool {
	return strings.HasPrefix(name, writerPrefix) && isUUID(name[len(writerPrefix):])
}

// counterLayout: a recipes/atomic value that a Go handle has written (a
// Curator counter has no child, and its 4 or 8 bytes say nothing a client
// could tell from other data).
func counterLayout(_ string, z *Znode) (Layout, bool) {
	if !CounterData(z.Data) {
		return Layout{}, false
	}
	l := Layout{Kind: KindCounter, Parts: map[string]string{}}
	for _, c := range z.Children {
		if !IsWriterName(c.Name) {
			return Layout{}, false
		}
		l.Parts[c.Name] = PartWriter
		l.Size++
	}
	return l, true
}

// CounterData reports whether data may be an atomic counter's: empty (0),
// an Int's 4 bytes or a Long's 8.
func CounterData(data []byte) bool {
	switch len(data) {
	case 0, 4, 8:
		return true
	}
	return false
}

// Queue item prefixes (Curator's QUEUE_PREFIX and SimpleDistributedQueue's).
const (
	queuePrefix       = "queue-"
	simpleQueuePrefix = "qn-"
)

// queueSeq reports whether name is prefix, anything, then a 10-digit
// sequence: a queue item's name (the id, priority and delay variants put
// their encoding between the two).
func queueSeq(name, prefix string) bool {
	if !strings.HasPrefix(name, prefix) || len(name) < len(prefix)+10 {
		return false
	}
	for _, r := range name[len(name)-10:] {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// queueLayout: every child a queue item (persistent, no children), or
// every child an item's ephemeral node in a lock path.
func queueLayout(_ string, z *Znode) (Layout, bool) {
	kind := ""
	for _, c := range z.Children {
		var k string
		switch {
		case queueSeq(c.Name, queuePrefix) && c.IsEphemeral():
			k = KindQueueLock
		case queueSeq(c.Name, queuePrefix) && c.NumChildren == 0:
			k = KindQueue
		case queueSeq(c.Name, simpleQueuePrefix) && !c.IsEphemeral() && c.NumChildren == 0:
			k = KindSimpleQueue
		default:
			return Layout{}, false
		}
		if kind != "" && k != kind {
			return Layout{}, false
		}
		kind = k
	}
	l := Layout{Kind: kind, Size: len(z.Children), Parts: map[string]string{}}
	for _, c := range z.Children {
		l.Parts[c.Name] = PartItem
	}
	return l, true
}

// sharderLayout: every child a QueueSharder's shard, "queue-" and a UUID
// (Curator names them by UUID.randomUUID()), persistent, holding queue
// items or nothing.
func sharderLayout(_ string, z *Znode) (Layout, bool) {
	l := Layout{Kind: KindQueueSharder, Size: len(z.Children), Parts: map[string]string{}}
	for _, c := range z.Children {
		if !strings.HasPrefix(c.Name, queuePrefix) || !isUUID(c.Name[len(queuePrefix):]) || c.IsEphemeral() {
			return Layout{}, false
		}
		for _, item := range c.Children {
			if !queueSeq(item.Name, queuePrefix) {
				return Layout{}, false
			}
		}
		l.Parts[c.Name] = PartShard
	}
	return l, true
}

// IsServiceInstance reports whether data is Curator's ServiceInstance
// JSON: an object with name, id, registrationTimeUTC and serviceType.
func IsServiceInstance(data []byte) bool {
	if len(data) < 2 || data[0] != '{' {
		return false
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(data, &fields) != nil {
		return false
	}
	for _, k := range []string{"name", "id", "registrationTimeUTC", "serviceType"} {
		if _, ok := fields[k]; !ok {
			return false
		}
	}
	return true
}

// serviceLayout: children holding ServiceInstance JSON (others are
// foreign: Curator's readers skip a node they cannot read).
func serviceLayout(_ string, z *Znode) (Layout, bool) {
	l := Layout{Kind: KindService, Parts: map[string]string{}}
	for _, c := range z.Children {
		if IsServiceInstance(c.Data) {
			l.Parts[c.Name] = PartInstance
			l.Size++
		}
	}
	return l, l.Size > 0
}

// servicesLayout: a base path, whose children are services (or services
// left with no instance: empty directories).
func servicesLayout(path string, z *Znode) (Layout, bool) {
	l := Layout{Kind: KindServices, Parts: map[string]string{}}
	for _, c := range z.Children {
		if !c.Loaded {
			return Layout{}, false
		}
		if _, ok := serviceLayout(joinPath(path, c.Name), c); ok {
			l.Parts[c.Name] = PartService
			l.Size++
			continue
		}
		if c.IsEphemeral() || len(c.Children) > 0 || len(c.Data) > 0 {
			return Layout{}, false
		}
		l.Parts[c.Name] = PartService
	}
	return l, l.Size > 0
}

// readyName is the double barrier's ready node.
const readyName = "ready"

// doubleBarrierLayout: ephemeral members (Curator names them by a random
// UUID) and a persistent "ready" node. Without ready, its members look like
// a group's whose ids are UUIDs, and are taken for one (MayBeDoubleBarrier).
func doubleBarrierLayout(_ string, z *Znode) (Layout, bool) {
	ready := z.Child(readyName)
	if ready == nil || ready.IsEphemeral() {
		return Layout{}, false
	}
	l := Layout{Kind: KindDoubleBarrier, Parts: map[string]string{readyName: PartReady}}
	for _, c := range z.Children {
		if c.Name == readyName {
			continue
		}
		if !c.IsEphemeral() {
			return Layout{}, false
		}
		l.Parts[c.Name] = PartMember
		l.Size++
	}
	return l, true
}

// groupLayout: every child ephemeral, named by no other recipe (an
// ephemeral node has no children).
func groupLayout(_ string, z *Znode) (Layout, bool) {
	l := Layout{Kind: KindGroup, Parts: map[string]string{}}
	for _, c := range z.Children {
		if !c.IsEphemeral() {
			return Layout{}, false
		}
		l.Parts[c.Name] = PartMember
		l.Size++
	}
	return l, true
}

// MayBeDoubleBarrier reports whether l may be a double barrier: one, or a
// group whose members are all named by UUIDs (a double barrier before its
// round's ready node, which Identify cannot tell from such a group).
func MayBeDoubleBarrier(l Layout) bool {
	if l.Kind == KindDoubleBarrier {
		return true
	}
	if l.Kind != KindGroup {
		return false
	}
	for name := range l.Parts {
		if !isUUID(name) {
			return false
		}
	}
	return true
}
