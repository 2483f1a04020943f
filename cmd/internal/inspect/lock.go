package inspect

import (
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Kinds of recipe, as the gocurator command prints them.
const (
	KindMutex       = "mutex"        // lock- nodes (mutex, LeaderSelector, V1 semaphore of unknown max, kazoo Lock)
	KindReadWrite   = "read-write"   // __READ__/__WRIT__ or kazoo's __rlock__/__lock__
	KindSemaphoreV1 = "semaphore-v1" // lock- nodes with a known max above 1
	KindSemaphoreV2 = "semaphore-v2" // locks/ gate and leases/ directories
	KindLatch       = "latch"        // Curator LeaderLatch latch- nodes
)

// Roles of a participant's node.
const (
	RoleLock  = "lock"  // a mutex or V1 semaphore node
	RoleRead  = "read"  // a read lock node
	RoleWrite = "write" // a write lock node
	RoleLease = "lease" // a V2 lease node
	RoleGate  = "gate"  // a V2 gate node (in locks/)
	RoleLatch = "latch" // a leader latch node
)

// Session states, from the servers' cons.
const (
	Connected    = "yes"     // a server lists the session as connected
	Disconnected = "no"      // every server answered and none lists it
	Unknown      = "unknown" // some server did not answer cons (or refuses four-letter words)
)

// Lock is one recognised recipe instance.
type Lock struct {
	Path string `json:"path"`
	Kind string `json:"kind"`
	// Max is the number of holders allowed, 0 when not known.
	Max int `json:"max,omitempty"`
	// MaxSource says where Max came from.
	MaxSource string        `json:"max_source,omitempty"`
	Holders   []Participant `json:"holders"`
	Waiters   []Participant `json:"waiters"`
}

// Participant is one node of a recipe: a holder or a waiter.
type Participant struct {
	Node   string `json:"node"` // full path
	Role   string `json:"role"`
	Client string `json:"client"` // curator, go-zookeeper, kazoo or other
	Seq    int32  `json:"seq"`
	// Session is the owner session, "0x..." (hex).
	Session string `json:"session"`
	// Host is the node's data when it is short printable text (Curator
	// writes the client's IP address); for a latch, the participant id.
	Host  string `json:"host"`
	Token int64  `json:"token"` // czxid, the fencing token
	// Created is when the node was made; AgeSeconds how long ago, when
	// the listing was taken.
	Created    time.Time `json:"created"`
	AgeSeconds float64   `json:"age_seconds"`
	// Connected is yes, no or unknown (see Sessions).
	Connected string `json:"connected"`
	// Addr is the owner's client address as a server's cons shows it.
	Addr string `json:"addr,omitempty"`
	// Revoking is true when the node's data is Curator's revocation
	// request ("__REVOKE__").
	Revoking bool `json:"revoking,omitempty"`
	// HeldSince is when the node was seen to become a holder, and
	// HeldSeconds how long ago: only locks watch sets them, for a node it
	// saw waiting first, as ZooKeeper records no time for a grant (AGE
	// counts the wait too).
	HeldSince   *time.Time `json:"held_since,omitempty"`
	HeldSeconds float64    `json:"held_seconds,omitempty"`

	owner int64
	mark  string
}

// Owner returns the owner session id.
func (p Participant) Owner() int64 { return p.owner }

// Name returns the last segment of the node's path.
func (p Participant) Name() string { return p.Node[strings.LastIndexByte(p.Node, '/')+1:] }

// revokeMessage is Curator's REVOKE_MESSAGE.
const revokeMessage = "__REVOKE__"

// maxHost bounds the node data shown as host.
const maxHost = 255

// participant builds a Participant from a node of dir.
func participant(dir string, z *Znode, p parsed, role string) Participant {
	out := Participant{
		Node:    joinPath(dir, z.Name),
		Role:    role,
		Client:  p.client,
		Seq:     p.seq,
		Session: SessionHex(z.Owner),
		Token:   z.Czxid,
		Created: z.Ctime,
		owner:   z.Owner,
		mark:    p.mark,
	}
	data := string(z.Data)
	if data == revokeMessage {
		out.Revoking = true
	} else if printable(data) {
		out.Host = data
	}
	return out
}

// SessionHex formats a session id as ZooKeeper's tools do.
func SessionHex(id int64) string { return fmt.Sprintf("0x%x", uint64(id)) }

// printable reports whether s is short one-line text.
func printable(s string) bool {
	if len(s) > maxHost || !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}

// joinPath joins a parent path and a child name.
func joinPath(dir, name string) string {
	if dir == "/" {
		return "/" + name
	}
	return dir + "/" + name
}

// sortBySeq orders participants by sequence, wrap-aware; ties put a write
// node first (a downgrade read node takes its write node's number), then
// go by name.
func sortBySeq(ps []Participant) {
	slices.SortStableFunc(ps, func(a, b Participant) int {
		switch {
		case a.Seq != b.Seq && before(a.Seq, b.Seq):
			return -1
		case a.Seq != b.Seq:
			return 1
		case isWrite(a) != isWrite(b):
			if isWrite(a) {
				return -1
			}
			return 1
		default:
			return strings.Compare(a.Node, b.Node)
		}
	})
}

func isWrite(p Participant) bool { return p.Role == RoleWrite }
