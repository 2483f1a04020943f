package group

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"go.uber.org/zap"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/fanout"
	"github.com/gocurator/curator/recipes/cache"
	"github.com/gocurator/curator/recipes/node"
)

// Member is one member of a group: Curator's GroupMember. It keeps its
// node <path>/<id> while it runs and reads the group's members from a
// cache. A Member is safe for concurrent use. A nil *Member reports no
// members: its calls that act on ZooKeeper return ErrNilHandle.
type Member struct {
	c     *framework.Client
	path  string
	id    string
	err   error
	log   *zap.Logger
	node  *node.Node
	cache *cache.Cache

	mu       sync.Mutex
	started  bool
	closed   bool
	listen   fanout.Fanout[Event]
	unlisten func()
}

// New returns a member with id of the group at path, whose node carries
// payload (nil: the client's default data, its local address, as
// Curator's GroupMember). It does no I/O: Start joins the group. Invalid
// arguments (a nil client, an invalid path or id) are reported by Start.
func New(c *framework.Client, path, id string, payload []byte, opts ...Option) *Member {
	var o options
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	m := &Member{c: c, path: path, id: id}
	m.err = validate(c, path, id)
	m.log = o.log
	if m.log == nil {
		m.log = zap.NewNop()
		if c != nil {
			m.log = c.Logger().Named("group")
		}
	}
	if payload == nil && c != nil {
		payload = c.DefaultData()
	}
	member := path + "/" + id
	if path == "/" {
		member = "/" + id
	}
	nodeOpts := append([]node.Option{node.WithLogger(m.log)}, o.node...)
	m.node = node.New(c, member, payload, nodeOpts...)
	m.cache = cache.New(c, path, cache.WithMaxDepth(1))
	return m
}

func validate(c *framework.Client, path, id string) error {
	if c == nil {
		return ErrNilClient
	}
	if err := framework.ValidatePath(path); err != nil {
		return err
	}
	if id == "" || id == "." || id == ".." || strings.Contains(id, "/") {
		return fmt.Errorf("%w: %q", ErrInvalidID, id)
	}
	return framework.ValidatePath("/" + id)
}

// Start joins the group: it loads the cache of the group (Listen hears of
// each member found as Joined), then makes the member's node (see
// node.Node.Start: while another session holds this id it waits for that
// node to go, unless FailIfOwned or TakeOver) and returns once the node
// exists. A Close meanwhile ends it with ErrClosed. On failure, or when
// ctx ends first (its error), Start leaves no node and nothing running, and
// may be called again (not after Close). A second Start of a running
// member returns ErrAlreadyStarted; Start after Close, ErrClosed.
func (m *Member) Start(ctx context.Context) error {
	if m == nil {
		return ErrNilHandle
	}
	if m.err != nil {
		return fmt.Errorf("group %s: start %s: %w", m.path, m.id, m.err)
	}
	m.mu.Lock()
	switch {
	case m.closed:
		m.mu.Unlock()
		return fmt.Errorf("group %s: start %s: %w", m.path, m.id, ErrClosed)
	case m.started:
		m.mu.Unlock()
		return fmt.Errorf("group %s: start %s: %w", m.path, m.id, ErrAlreadyStarted)
	}
	m.started = true
	m.mu.Unlock()
	err := m.start(ctx)
	if err != nil {
		m.mu.Lock()
		m.started = false
		closed := m.closed
		m.mu.Unlock()
		if closed {
			err = ErrClosed // Close ended the start (the Node's ErrClosed is not ours)
		}
		return fmt.Errorf("group %s: start %s: %w", m.path, m.id, err)
	}
	return nil
}

func (m *Member) start(ctx context.Context) error {
	// A Cache starts once: a Start after a failed one makes a new one.
	c := cache.New(m.c, m.path, cache.WithMaxDepth(1))
	unlisten := c.Listen(m.forward)
	m.mu.Lock()
	m.cache = c
	m.mu.Unlock()
	if err := c.Start(ctx); err != nil {
		unlisten()
		return err
	}
	if err := m.node.Start(ctx); err != nil {
		unlisten()
		_ = c.Close()
		return err
	}
	m.mu.Lock()
	m.unlisten = unlisten
	m.mu.Unlock()
	return nil
}

// forward turns the cache's events on the group's children into Events.
func (m *Member) forward(ev cache.Event) {
	parent, id := framework.SplitPath(ev.Path)
	if ev.Path == m.path || parent != m.path {
		return
	}
	var t EventType
	switch ev.Type {
	case cache.Created:
		t = Joined
	case cache.Changed:
		t = Updated
	case cache.Deleted:
		t = Left
	default:
		return
	}
	m.listen.Publish(Event{Type: t, ID: id, Payload: ev.Node.Data, Session: ev.Node.Stat.EphemeralOwner})
}

// ID returns the member's id.
func (m *Member) ID() string {
	if m == nil {
		return ""
	}
	return m.id
}

// Node returns the Node that keeps the member's node: its Registered,
// Status and Listen say whether the member is in the group, made in the
// live session, and why not.
func (m *Member) Node() *node.Node {
	if m == nil {
		return nil
	}
	return m.node
}

// Members returns the group's members, id to payload, as the cache holds
// them: every member node under the group's path, and this member, with its
// payload, whether its node is there or not (as Curator's
// getCurrentMembers). Before Start, and after Close, it holds what the
// cache last held. It does no I/O. The payloads must not be modified.
func (m *Member) Members() map[string][]byte {
	if m == nil {
		return map[string][]byte{}
	}
	m.mu.Lock()
	c := m.cache
	m.mu.Unlock()
	members := map[string][]byte{}
	for _, id := range c.Children(m.path) {
		if n, ok := c.Get(framework.JoinPath(m.path, id)); ok {
			members[id] = n.Data
		}
	}
	if _, ok := members[m.id]; !ok {
		members[m.id] = m.node.Data()
	}
	return members
}

// SetPayload changes the member's payload (Curator's setThisData): on its
// node now if it is registered, and on every node made from now on. See
// node.Node.SetData (a payload too large for the server is refused, and
// the member keeps its payload). After Close it returns ErrClosed.
func (m *Member) SetPayload(ctx context.Context, payload []byte) error {
	if m == nil {
		return ErrNilHandle
	}
	m.mu.Lock()
	closed := m.closed
	m.mu.Unlock()
	if closed {
		return fmt.Errorf("group %s: member %s: set payload: %w", m.path, m.id, ErrClosed)
	}
	if err := m.node.SetData(ctx, payload); err != nil {
		return fmt.Errorf("group %s: member %s: %w", m.path, m.id, err)
	}
	return nil
}

// Listen registers fn for every change of the group's membership from now
// on (Joined, Left, Updated), in order, never dropped, on a goroutine of
// the listener's own. Start reports each member already there as Joined.
// cancel unregisters fn. Close ends the listeners; Listen after Close
// registers nothing and returns a no-op cancel.
func (m *Member) Listen(fn func(Event)) (cancel func()) {
	if m == nil {
		return func() {}
	}
	return m.listen.Add(fn)
}

// Close leaves the group: it deletes the member's node (see
// node.Node.Close: guaranteed, never another session's node) and stops the
// cache and the listeners. It returns once the node is deleted, or ctx's
// error (the delete then goes on in the background). Close is idempotent.
func (m *Member) Close(ctx context.Context) error {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	unlisten := m.unlisten
	m.mu.Unlock()
	err := m.node.Close(ctx)
	if unlisten != nil {
		unlisten()
	}
	m.mu.Lock()
	c := m.cache
	m.mu.Unlock()
	_ = c.Close()
	m.listen.Close()
	if err != nil {
		return fmt.Errorf("group %s: close %s: %w", m.path, m.id, err)
	}
	return nil
}
