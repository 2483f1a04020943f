package inspect

import "time"

// Reasons a node is reported by Orphans.
const (
	// OrphanSessionGone: an ephemeral node whose owner session no server
	// lists as connected. It stays, and keeps its lock, until the server
	// expires the session (at most the session timeout after the owner
	// was last heard from).
	OrphanSessionGone = "session-gone"
	// OrphanEmptyParent: a node without data or children that once had
	// children: a lock directory. The server deletes an empty container
	// (what Curator 4+ and this module make) on its next check, every
	// minute by default (znode.container.checkIntervalMs), but never a
	// persistent one, which old clients make. ZooKeeper does not tell a
	// client which a node is: one still listed after the check interval is
	// persistent.
	OrphanEmptyParent = "empty-parent"
)

// Orphan is a node left behind.
type Orphan struct {
	Node       string    `json:"node"`
	Reason     string    `json:"reason"`
	Session    string    `json:"session,omitempty"`
	Token      int64     `json:"token"`
	Created    time.Time `json:"created"`
	AgeSeconds float64   `json:"age_seconds"`
}

// Orphans walks the loaded tree at path and returns, depth first in name
// order, the ephemeral nodes whose owner session is not connected (only
// when s is Complete: otherwise nothing can be said of them) and the empty
// parents (see OrphanEmptyParent). /zookeeper is skipped, and so is an
// empty directory of a recipe in use (a busy V2 semaphore's locks/ gate
// between two acquires): Identify tells them.
func Orphans(path string, root *Znode, s *Sessions, now time.Time) []Orphan {
	var out []Orphan
	var walk func(p string, z *Znode, inUse bool)
	walk = func(p string, z *Znode, inUse bool) {
		if p == "/zookeeper" {
			return
		}
		age := max(0, now.Sub(z.Ctime).Round(time.Millisecond).Seconds())
		switch {
		case z.IsEphemeral():
			if st, _ := s.State(z.Owner); st == Disconnected {
				out = append(out, Orphan{Node: p, Reason: OrphanSessionGone, Session: SessionHex(z.Owner),
					Token: z.Czxid, Created: z.Ctime, AgeSeconds: age})
			}
		case z.IsEmptyParent() && !inUse:
			out = append(out, Orphan{Node: p, Reason: OrphanEmptyParent, Token: z.Czxid, Created: z.Ctime, AgeSeconds: age})
		}
		l := Identify(p, z)
		for _, c := range z.Children {
			walk(joinPath(p, c.Name), c, l.InUse() && IsStructural(l.Parts[c.Name]))
		}
	}
	walk(path, root, false)
	return out
}
