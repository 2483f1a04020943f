package inspect

import "strings"

// Directory names of Curator's InterProcessSemaphoreV2.
const (
	v2Locks  = "locks"
	v2Leases = "leases"
)

// Classify returns the recipes whose nodes are the children of dir, read at
// path (a V2 semaphore also needs its locks/ and leases/ children loaded).
// Each lock lists its holders first, then its waiters, in the order the
// recipe grants them. Children that carry no recipe's name are ignored, as
// the recipes ignore them. Several recipes on one path (which the recipes
// would each ignore the other's nodes of) come out as several locks.
func Classify(path string, dir *Znode) []Lock {
	var locks []Lock
	if l, ok := semaphoreV2(path, dir); ok {
		locks = append(locks, l)
	}
	var mutex, rw, kazoo, latch []Participant
	kazooRead := false
	for _, c := range dir.Children {
		p, ok := parseName(c.Name)
		if !ok {
			continue
		}
		switch p.mark {
		case markLock:
			mutex = append(mutex, participant(path, c, p, RoleLock))
		case markRead:
			rw = append(rw, participant(path, c, p, RoleRead))
		case markWrite:
			rw = append(rw, participant(path, c, p, RoleWrite))
		case markKLock:
			kazoo = append(kazoo, participant(path, c, p, RoleWrite))
		case markKRLock:
			kazooRead = true
			kazoo = append(kazoo, participant(path, c, p, RoleRead))
		case markLatch:
			latch = append(latch, participant(path, c, p, RoleLatch))
		}
	}
	if len(kazoo) > 0 && !kazooRead {
		// A kazoo Lock (or a write lock with no reader about): the mutex
		// rule applies.
		for i := range kazoo {
			kazoo[i].Role = RoleLock
		}
		mutex = append(mutex, kazoo...)
		kazoo = nil
	}
	if len(mutex) > 0 {
		locks = append(locks, firstN(path, KindMutex, mutex, 1))
	}
	if len(rw) > 0 {
		locks = append(locks, readWrite(path, rw))
	}
	if len(kazoo) > 0 {
		locks = append(locks, readWrite(path, kazoo))
	}
	if len(latch) > 0 {
		locks = append(locks, firstN(path, KindLatch, latch, 1))
	}
	return locks
}

// Find returns the recipes at path and, if recursive, at every loaded node
// below it, depth first in name order. The V2 semaphore's own directories
// are not searched again, nor is /zookeeper.
func Find(path string, root *Znode, recursive bool) []Lock {
	locks := Classify(path, root)
	if !recursive {
		return locks
	}
	v2 := false
	for _, l := range locks {
		v2 = v2 || l.Kind == KindSemaphoreV2
	}
	for _, c := range root.Children {
		if !c.Loaded || (v2 && (c.Name == v2Locks || c.Name == v2Leases)) {
			continue
		}
		child := joinPath(path, c.Name)
		if child == "/zookeeper" {
			continue
		}
		locks = append(locks, Find(child, c, true)...)
	}
	return locks
}

// firstN sorts ps and makes the first n holders.
func firstN(path, kind string, ps []Participant, n int) Lock {
	sortBySeq(ps)
	n = min(n, len(ps))
	return Lock{
		Path:    path,
		Kind:    kind,
		Holders: append([]Participant{}, ps[:n]...),
		Waiters: append([]Participant{}, ps[n:]...),
	}
}

// readWrite applies the read/write lock's rules: a write node holds iff no
// node comes before it; a read node holds iff every write node before it is
// held by its own session (the holder of the write lock may take the read
// lock; a downgrade's read node takes its write node's number).
func readWrite(path string, ps []Participant) Lock {
	sortBySeq(ps)
	l := Lock{Path: path, Kind: KindReadWrite, Holders: []Participant{}, Waiters: []Participant{}}
	writeHeld := false
	var writeOwner int64
	for i, p := range ps {
		held := false
		switch p.Role {
		case RoleWrite:
			held = i == 0 || !before(ps[0].Seq, p.Seq)
			if held {
				writeHeld, writeOwner = true, p.owner
			}
		case RoleRead:
			held = true
			for _, q := range ps[:i] {
				if q.Role == RoleWrite && (!writeHeld || q.owner != writeOwner || q.owner != p.owner) {
					held = false
					break
				}
			}
		}
		if held {
			l.Holders = append(l.Holders, p)
		} else {
			l.Waiters = append(l.Waiters, p)
		}
	}
	return l
}

// semaphoreV2 recognises Curator's InterProcessSemaphoreV2 at dir: a
// leases/ child, with lease nodes in it or a locks/ child beside it. With
// no maximum known every lease is shown as held (see ApplyMax) but the
// newest one when the gate holder owns it; the gate's nodes are waiters,
// in order.
func semaphoreV2(path string, dir *Znode) (Lock, bool) {
	leases, locks := dir.Child(v2Leases), dir.Child(v2Locks)
	if leases == nil {
		return Lock{}, false
	}
	leasePath, locksPath := joinPath(path, v2Leases), joinPath(path, v2Locks)
	var held, gate []Participant
	for _, c := range leases.Children {
		if p, ok := parseName(c.Name); ok && p.mark == markLease {
			held = append(held, participant(leasePath, c, p, RoleLease))
		}
	}
	if locks != nil {
		for _, c := range locks.Children {
			if p, ok := parseName(c.Name); ok && p.mark == markLock {
				gate = append(gate, participant(locksPath, c, p, RoleGate))
			}
		}
	}
	if len(held) == 0 && locks == nil {
		return Lock{}, false
	}
	sortBySeq(held)
	sortBySeq(gate)
	// Only the gate holder makes lease nodes, and it waits, still holding
	// the gate, while there are too many: a newest lease of the gate
	// holder's session is waiting (or admitted this instant, about to
	// release the gate).
	var waiting []Participant
	if n := len(held); n > 1 && len(gate) > 0 && held[n-1].owner == gate[0].owner {
		held, waiting = held[:n-1], held[n-1:]
	}
	return Lock{
		Path:    path,
		Kind:    KindSemaphoreV2,
		Holders: append([]Participant{}, held...),
		Waiters: append(append([]Participant{}, waiting...), gate...),
	}, true
}

// ApplyMax sets the number of holders the lock allows, for the recipes
// whose layout does not say it: a mutex layout with max above 1 is a V1
// semaphore; a V2 semaphore's leases beyond max are waiting (the gate
// holder's lease, made before it waits). source says where max came from.
// Other kinds are left alone.
func (l *Lock) ApplyMax(max int, source string) {
	if max < 1 {
		return
	}
	switch l.Kind {
	case KindMutex, KindSemaphoreV1:
		all := append(append([]Participant{}, l.Holders...), l.Waiters...)
		kind := KindMutex
		if max > 1 {
			kind = KindSemaphoreV1
		}
		*l = firstN(l.Path, kind, all, max)
	case KindSemaphoreV2:
		var leases, gate []Participant
		for _, p := range append(append([]Participant{}, l.Holders...), l.Waiters...) {
			if p.Role == RoleLease {
				leases = append(leases, p)
			} else {
				gate = append(gate, p)
			}
		}
		n := min(max, len(leases))
		l.Holders = append([]Participant{}, leases[:n]...)
		l.Waiters = append(append([]Participant{}, leases[n:]...), gate...)
	default:
		return
	}
	l.Max, l.MaxSource = max, source
}

// IsParticipantName reports whether name is a node of one of the known
// recipes (a lock, lease or latch node).
func IsParticipantName(name string) bool {
	_, ok := parseName(name)
	return ok && !strings.ContainsRune(name, '/')
}
