package locking

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/framework"
)

// Foreign is another lock recipe's layout, as the children of a lock path
// show it: either participant nodes named with a mark (Curator's names, as
// in docs/wire-format.md), or a sub-directory that holds any node. A loop
// given Foreign layouts (RefusingLayouts) fails its acquires with
// framework.ErrLayoutMismatch on a path where one of them is at work: two
// recipes that each ignore the other's nodes would each admit their own
// holders, and neither would exclude the other's.
type Foreign struct {
	// Layout names the recipe in errors ("read/write lock").
	Layout string
	// Marks are the base names of its participants: a child carrying one,
	// followed by a sequence number (Sequence), is one of its nodes.
	Marks []string
	// Dir, if set, is a sub-directory of the path that is the recipe at
	// work whenever it holds any node (the V2 semaphore's "leases"); an
	// empty or missing one is nothing.
	Dir string
}

// The layouts of Curator's lock and election recipes that share a lock
// path's children. The mutex's mark is also the V1 semaphore's and
// LeaderSelector's (they are InterProcessMutex's layout with another
// limit): names cannot tell those apart.
var (
	// MutexLayout is InterProcessMutex's: "_c_<uuid>-lock-<seq>".
	MutexLayout = Foreign{Layout: "mutex (or V1 semaphore)", Marks: []string{"lock-"}}
	// ReadWriteLayout is InterProcessReadWriteLock's: "__READ__" and
	// "__WRIT__" nodes in one directory.
	ReadWriteLayout = Foreign{Layout: "read/write lock", Marks: []string{"__READ__", "__WRIT__"}}
	// LatchLayout is LeaderLatch's: "_c_<uuid>-latch-<seq>" (package
	// leader's default layout).
	LatchLayout = Foreign{Layout: "leader latch", Marks: []string{"latch-"}}
	// SemaphoreV2Layout is InterProcessSemaphoreV2's (and
	// InterProcessSemaphoreMutex's): any node in "<path>/leases", a lease
	// or a V1 semaphore's trace, which V2 counts as one.
	SemaphoreV2Layout = Foreign{Layout: "semaphore's leases", Dir: "leases"}
)

// RefusingLayouts makes every acquire refuse a lock path where one of the
// foreign layouts is at work, with framework.ErrLayoutMismatch (wrapped,
// naming the node found). The check runs once per node of ours, after it
// was created and before any decision, on the listing that came with the
// create (no request more, unless a Dir must be listed). That is enough in
// both directions when the other recipe refuses ours the same way: of two
// nodes, the one created second is seen by its creator's listing (ZooKeeper
// orders the creates, and a session's read follows its writes), so two
// mismatched acquirers can never both be admitted. A refused acquire
// deletes its node, as every failed one does.
func RefusingLayouts(layouts ...Foreign) Option {
	return func(l *Loop) { l.foreign = append(l.foreign, layouts...) }
}

// refuseForeign fails with framework.ErrLayoutMismatch if listing (the
// children of the loop's directory, as listed after our node was created;
// nil when that listing did not come) shows one of the loop's foreign
// layouts at work.
func (l *Loop) refuseForeign(ctx context.Context, listing []string) error {
	if len(l.foreign) == 0 {
		return nil
	}
	return CheckForeign(ctx, l.c, l.dir, listing, l.foreign...)
}

// CheckForeign fails with framework.ErrLayoutMismatch (wrapped, naming the
// node found) if one of layouts is at work in dir: listing is dir's
// children, or nil to list them. A recipe that decides outside the loop's
// directory (the V2 semaphore, whose nodes are in leases/) checks its
// path with it; to be sound it must run after the recipe's own node
// exists (see RefusingLayouts). zk.ErrNoNode (wrapped) when dir is gone.
func CheckForeign(ctx context.Context, c *framework.Client, dir string, listing []string, layouts ...Foreign) error {
	if listing == nil {
		var err error
		if listing, _, err = c.Children(ctx, dir); err != nil {
			return err
		}
	}
	for _, f := range layouts {
		if err := f.check(ctx, c, dir, listing); err != nil {
			return err
		}
	}
	return nil
}

// check looks for f in dir, whose children are listing.
func (f Foreign) check(ctx context.Context, c *framework.Client, dir string, listing []string) error {
	for _, child := range listing {
		for _, m := range f.Marks {
			if _, ok := Sequence(child, m); ok {
				return fmt.Errorf("%w: found a %s node %q", framework.ErrLayoutMismatch, f.Layout, child)
			}
		}
		if f.Dir == "" || child != f.Dir {
			continue
		}
		in, _, err := c.Children(ctx, framework.JoinPath(dir, f.Dir))
		if errors.Is(err, zk.ErrNoNode) {
			continue // reaped since the listing: nothing there
		}
		if err != nil {
			return err
		}
		if len(in) > 0 {
			return fmt.Errorf("%w: found a %s node %q", framework.ErrLayoutMismatch, f.Layout, f.Dir+"/"+in[0])
		}
	}
	return nil
}
