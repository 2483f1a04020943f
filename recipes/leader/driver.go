package leader

import (
	"context"
	"fmt"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/locking"
)

// driver is an election's driver of the lock loop: the standard driver of
// its layout (Curator's LeaderLatch or LeaderSelector), which refuses to
// campaign on a path that holds the other layout's nodes. The two layouts
// ignore each other's nodes (each sorts only its own name), so on one path
// each would elect a leader of its own: two leaders with no sign. The look
// is sound once our node exists: of two candidates of different layouts,
// the one whose node came second lists the other's.
type driver struct {
	locking.StandardDriver
	c    *framework.Client
	path string
}

// Begin gives each attempt the layout check.
func (d driver) Begin(context.Context, bool) (locking.Attempt, error) {
	return locking.Attempt{Check: d.check}, nil
}

// check fails with ErrLayoutMismatch if listing (the directory as listed
// right behind our create; nil if that listing did not come, then it lists
// again) holds a node of the other layout.
func (d driver) check(ctx context.Context, listing []string) error {
	if listing == nil {
		children, _, err := d.c.Children(ctx, d.path)
		if err != nil {
			return err // zk.ErrNoNode: the path went with our node
		}
		listing = children
	}
	return mismatch(d.LockName, listing)
}

// foreignNames are the node names of the lock layouts an election can
// find on its path: the two election layouts and Curator's
// InterProcessReadWriteLock's (whose nodes neither election layout sorts,
// so a read or write lock would be held beside a leader).
var foreignNames = []struct{ name, recipe string }{
	{latchName, "LeaderLatch"},
	{selectorName, "LeaderSelector (InterProcessMutex)"},
	{"__READ__", "InterProcessReadWriteLock's read lock"},
	{"__WRIT__", "InterProcessReadWriteLock's write lock"},
}

// mismatch fails with ErrLayoutMismatch, naming what it found, if children
// holds a node of a layout other than the one whose nodes are named
// lockName.
func mismatch(lockName string, children []string) error {
	for _, c := range children {
		if _, ok := locking.Sequence(c, lockName); ok {
			continue
		}
		for _, f := range foreignNames {
			if _, ok := locking.Sequence(c, f.name); ok {
				return fmt.Errorf("%w: the %s layout found %s's node %q", ErrLayoutMismatch,
					layoutName(lockName), f.recipe, c)
			}
		}
	}
	return nil
}

// layoutName names the election layout whose nodes are named lockName as
// Curator names the recipe.
func layoutName(lockName string) string {
	if lockName == latchName {
		return "LeaderLatch"
	}
	return "LeaderSelector (InterProcessMutex)"
}
