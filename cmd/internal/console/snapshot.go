package console

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"sort"
	"time"
	"unicode/utf8"

	"github.com/gocurator/curator/cmd/internal/inspect"
	"github.com/gocurator/curator/connstate"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/discovery"
)

// snapshot is one published version of the model, shared by every
// request that reads it: the overview's rows are built once per version,
// however many browsers look.
type snapshot struct {
	version  uint64
	recipes  []Recipe
	index    map[string]int
	empties  []inspect.Orphan
	state    connstate.State
	since    time.Time
	loaded   bool
	nodes    int
	sessions string
	problems []string
}

// snapshot returns the current version's snapshot.
func (m *model) snapshot() *snapshot {
	m.mu.RLock()
	s := m.snap
	m.mu.RUnlock()
	if s != nil {
		return s
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.snap != nil {
		return m.snap
	}
	s = &snapshot{version: m.version, index: map[string]int{}, state: m.state, since: m.since,
		loaded: m.loaded, nodes: m.nodes, sessions: sessionsState(m.sessions)}
	if m.sessions != nil {
		s.problems = m.sessions.Problems
	}
	now := time.Now()
	for _, p := range m.sortedLocked() {
		s.index[p] = len(s.recipes)
		s.recipes = append(s.recipes, m.summaryLocked(p, m.recipes[p], now))
	}
	for _, o := range m.empties {
		s.empties = append(s.empties, o)
	}
	sort.Slice(s.empties, func(i, j int) bool { return s.empties[i].Node < s.empties[j].Node })
	m.snap = s
	return s
}

// aged returns r with its ages at now.
func aged(r Recipe, now time.Time) Recipe {
	if r.OldestHolderSince != nil {
		r.OldestHolderAgeSeconds = ageSeconds(*r.OldestHolderSince, now)
	}
	return r
}

func ageSeconds(t, now time.Time) float64 {
	return max(0, now.Sub(t).Round(time.Millisecond).Seconds())
}

// locksLocked returns the locks of e with each participant's session
// state and age.
func (m *model) locksLocked(e entry, now time.Time) []inspect.Lock {
	locks := make([]inspect.Lock, len(e.layout.Locks))
	for i, l := range e.layout.Locks {
		l.Holders = append([]inspect.Participant{}, l.Holders...)
		l.Waiters = append([]inspect.Participant{}, l.Waiters...)
		locks[i] = l
	}
	inspect.Annotate(locks, m.sessions, now)
	return locks
}

// summaryLocked is the overview's row of the recipe at p.
func (m *model) summaryLocked(p string, e entry, now time.Time) Recipe {
	r := Recipe{Path: p, Kind: e.layout.Kind, Size: e.layout.Size}
	switch {
	case isLockKind(r.Kind):
		for _, l := range m.locksLocked(e, now) {
			r.Holders += len(l.Holders)
			r.Waiters += len(l.Waiters)
			for _, h := range l.Holders {
				if r.Leader == "" {
					r.Leader = h.Host
				}
				if r.OldestHolderSince == nil || h.Created.Before(*r.OldestHolderSince) {
					t := h.Created
					r.OldestHolderSince = &t
				}
				if h.Connected == inspect.Disconnected {
					r.Warnings = append(r.Warnings, Warning{Kind: WarnHolderGone, Node: h.Node,
						Message: fmt.Sprintf("holder %s: session %s is connected to no server (it keeps the lock until the session expires)", h.Name(), h.Session)})
				}
			}
			for _, w := range l.Waiters {
				if w.Connected == inspect.Disconnected {
					r.Warnings = append(r.Warnings, Warning{Kind: WarnOrphanNode, Node: w.Node,
						Message: fmt.Sprintf("orphan node %s: session %s is connected to no server", w.Name(), w.Session)})
				}
			}
		}
	case r.Kind == inspect.KindCounter:
		if c, ok := counterOf(e.z); ok {
			r.Value = &c.Value
		}
	case r.Kind == inspect.KindQueue || r.Kind == inspect.KindSimpleQueue:
		if d := m.depths[p]; len(d) >= 3 && growing(d) {
			r.Warnings = append(r.Warnings, Warning{Kind: WarnGrowing,
				Message: fmt.Sprintf("queue growing: %d items, up at each of its last %d changes", d[len(d)-1], len(d)-1)})
		}
	}
	if !isLockKind(r.Kind) {
		for _, c := range e.z.Children {
			if c.Owner == 0 || e.layout.Parts[c.Name] == "" {
				continue
			}
			if st, _ := m.sessions.State(c.Owner); st == inspect.Disconnected {
				r.Warnings = append(r.Warnings, Warning{Kind: WarnOrphanNode, Node: framework.JoinPath(p, c.Name),
					Message: fmt.Sprintf("orphan node %s: session %s is connected to no server", c.Name, inspect.SessionHex(c.Owner))})
			}
		}
	}
	return r
}

func growing(d []int) bool {
	for i := 1; i < len(d); i++ {
		if d[i] <= d[i-1] {
			return false
		}
	}
	return true
}

// detail builds the page of the recipe at p; ok is false when there is
// none. Lists are cut at limit (0: no bound); payloads are left out
// unless withPayloads.
func (m *model) detail(p string, limit int, withPayloads bool) (Detail, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	e, ok := m.recipes[p]
	if !ok {
		return Detail{}, false
	}
	now := time.Now()
	d := Detail{Recipe: aged(m.summaryLocked(p, e, now), now), Sessions: sessionsState(m.sessions), PayloadsHidden: !withPayloads}
	cut := func(n int) int {
		if limit > 0 && n > limit {
			d.Truncated = true
			return limit
		}
		return n
	}
	switch kind := e.layout.Kind; {
	case isLockKind(kind):
		d.Locks = m.locksLocked(e, now)
		for i := range d.Locks {
			l := &d.Locks[i]
			l.Holders = l.Holders[:cut(len(l.Holders))]
			l.Waiters = l.Waiters[:cut(len(l.Waiters))]
		}
		d.Terms = append([]Term{}, m.terms[p]...)
	case kind == inspect.KindGroup || kind == inspect.KindDoubleBarrier:
		for _, c := range e.z.Children {
			if e.layout.Parts[c.Name] != inspect.PartMember {
				continue
			}
			if limit > 0 && len(d.Members) >= limit {
				d.Truncated = true
				break
			}
			d.Members = append(d.Members, m.memberLocked(c, now, withPayloads))
		}
	case kind == inspect.KindService:
		for _, c := range e.z.Children {
			if e.layout.Parts[c.Name] != inspect.PartInstance {
				continue
			}
			if limit > 0 && len(d.Instances) >= limit {
				d.Truncated = true
				break
			}
			d.Instances = append(d.Instances, m.instanceLocked(p, c, now, withPayloads))
		}
	case kind == inspect.KindServices:
		for _, c := range e.z.Children {
			if e.layout.Parts[c.Name] != inspect.PartService {
				continue
			}
			if limit > 0 && len(d.Services) >= limit {
				d.Truncated = true
				break
			}
			n := 0
			for _, i := range c.Children {
				if inspect.IsServiceInstance(i.Data) {
					n++
				}
			}
			d.Services = append(d.Services, Service{Name: c.Name, Instances: n})
		}
	case kind == inspect.KindCounter:
		if c, ok := counterOf(e.z); ok {
			d.Counter = &c
		}
	case kind == inspect.KindQueue || kind == inspect.KindSimpleQueue || kind == inspect.KindQueueLock:
		n := e.layout.Size
		d.Items = &n
	}
	return d, true
}

// memberLocked is a group member from its node.
func (m *model) memberLocked(c *inspect.Znode, now time.Time, withPayloads bool) Member {
	mb := Member{ID: c.Name, Created: c.Ctime, AgeSeconds: ageSeconds(c.Ctime, now), owner: c.Owner}
	if c.Owner != 0 {
		mb.Session = inspect.SessionHex(c.Owner)
		mb.Connected, _ = m.sessions.State(c.Owner)
	}
	if withPayloads {
		if utf8.Valid(c.Data) {
			mb.Payload = string(c.Data)
		} else {
			mb.PayloadBytes = c.Data
		}
		mb.pretty = pretty(c.Data)
	}
	return mb
}

// instanceLocked is a service instance from its node.
func (m *model) instanceLocked(svc string, c *inspect.Znode, now time.Time, withPayloads bool) Instance {
	in := Instance{Node: framework.JoinPath(svc, c.Name), ID: c.Name, Created: c.Ctime, AgeSeconds: ageSeconds(c.Ctime, now), owner: c.Owner}
	if inst, err := discovery.Decode(c.Data); err == nil {
		in.ID, in.Address, in.Port = inst.ID, inst.Address, inst.Port
	}
	if c.Owner != 0 {
		in.Session = inspect.SessionHex(c.Owner)
		in.Connected, _ = m.sessions.State(c.Owner)
	}
	if withPayloads {
		in.Instance = json.RawMessage(c.Data)
		in.pretty = pretty(c.Data)
	}
	return in
}

// pretty is data indented when it is JSON, as text when it is UTF-8,
// else as hex.
func pretty(data []byte) string {
	var b bytes.Buffer
	if json.Valid(data) && json.Indent(&b, data, "", "  ") == nil {
		return b.String()
	}
	if utf8.Valid(data) {
		return string(data)
	}
	return fmt.Sprintf("(%d bytes) % x", len(data), data)
}

// counterOf reads an atomic counter as Curator does: 8 bytes a long, 4 an
// int, nothing 0.
func counterOf(z *inspect.Znode) (Counter, bool) {
	c := Counter{Type: "long", Version: z.Version, Bytes: len(z.Data)}
	switch len(z.Data) {
	case 0:
	case 4:
		c.Type, c.Value = "int", int64(int32(binary.BigEndian.Uint32(z.Data)))
	case 8:
		c.Value = int64(binary.BigEndian.Uint64(z.Data))
	default:
		return Counter{}, false
	}
	return c, true
}
