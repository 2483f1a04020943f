package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/cmd/internal/inspect"
	"github.com/gocurator/curator/framework"
)

// wantKind is the kind locks ls gives the recipe exec takes part in: a
// V1 semaphore's and a LeaderSelector's nodes are a mutex's.
func wantKind(o execOptions) string {
	switch {
	case o.elect != nil && !o.elect.selector:
		return inspect.KindLatch
	case o.v2:
		return inspect.KindSemaphoreV2
	default:
		return inspect.KindMutex
	}
}

// checkLayout refuses a path where another recipe's nodes are (read/write
// lock nodes, a V2 semaphore's directories, a leader latch): each recipe
// ignores the others' nodes, so our hold would exclude none of their
// holders. With -n on a V2 semaphore it also refuses when more leases are
// held than -n allows: the other participants use a larger maximum (the
// V1 layout records none, so there nothing can be told). It reads the
// layout as locks ls does (package inspect), before the wait and again once
// the hold is granted, for participants that came meanwhile. A path that
// does not exist yet is fine.
func (a *app) checkLayout(ctx context.Context, c *framework.Client, path string, o execOptions) error {
	rctx, cancel := context.WithTimeout(ctx, a.timeout)
	defer cancel()
	root, err := inspect.Load(rctx, c, path, 2)
	if errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	if err != nil {
		return a.describe(path, err)
	}
	if root.IsEphemeral() {
		parent, _ := framework.SplitPath(path)
		return exitError{code: exitLayout, msg: fmt.Sprintf("%s is a participant's node, not a recipe (its parent is %s): nothing run", path, parent)}
	}
	want := wantKind(o)
	for _, l := range inspect.Classify(path, root) {
		if l.Kind != want {
			return exitError{code: exitLayout, msg: fmt.Sprintf(
				"%s holds a %s (%s, %s), not a %s: its holders would not be excluded; nothing run (see gocurator locks ls %s)",
				path, kindNoun(l.Kind), plural(len(l.Holders), "holder"), plural(len(l.Waiters), "waiter"), kindNoun(want), path)}
		}
		if want == inspect.KindSemaphoreV2 && o.leases > 0 && len(l.Holders) > o.leases {
			return exitError{code: exitLayout, msg: fmt.Sprintf(
				"%s: %d leases are held at once, more than -n %d allows: its other participants use a larger maximum; nothing run",
				path, len(l.Holders), o.leases)}
		}
	}
	// Not a lock at all: a group's members, a service's instances, a
	// queue's items would sit beside our lock node as foreign children.
	if l := inspect.Identify(path, root); l.Kind != "" && !isLockKind(l.Kind) {
		return wrongKind(path, inspect.Place{Layout: l}, root, withArticle(kindNoun(want)), "nothing run")
	}
	return nil
}

// isLockKind reports whether kind is one locks ls shows.
func isLockKind(kind string) bool {
	switch kind {
	case inspect.KindMutex, inspect.KindReadWrite, inspect.KindSemaphoreV1, inspect.KindSemaphoreV2, inspect.KindLatch:
		return true
	}
	return false
}
