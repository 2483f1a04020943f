package leader

import "github.com/gocurator/curator/recipes/locking"

// foreignLayouts are the layouts an election refuses to share its path
// with: the other election layout, Curator's InterProcessReadWriteLock
// (whose nodes neither election layout sorts, so a read or write lock
// would be held beside a leader) and a semaphore's leases. Each layout
// ignores the others' nodes (it sorts only its own name), so on one path
// each would decide on its own: two leaders, or a leader beside a lock
// holder, with no sign. The check (locking.RefusingLayouts) is sound once
// our node exists: of two candidates of different layouts, the one whose
// node came second lists the other's. LeaderSelector's layout is
// InterProcessMutex's (lock- nodes), so a selector shares its path with a
// mutex, as in Curator.
func foreignLayouts(selector bool) []locking.Foreign {
	if selector {
		return []locking.Foreign{locking.LatchLayout, locking.ReadWriteLayout, locking.SemaphoreV2Layout}
	}
	return []locking.Foreign{locking.MutexLayout, locking.ReadWriteLayout, locking.SemaphoreV2Layout}
}
