package inspect

import (
	"context"
	"errors"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/framework"
)

// Place is what a path is: a recipe (Part is ""), or one of the nodes of
// the recipe at Layout.Path (Part says which), or neither (Layout.Kind is
// "").
type Place struct {
	Layout Layout
	Part   string
}

// Locate reads path with its children and theirs, and says what it is: the
// recipe at path, else a node of the recipe at its parent, or of the V2
// semaphore above a gate or leases directory. It returns the node as read.
// Errors are Load's for path (zk.ErrNoNode when it is missing); a parent
// that cannot be read only leaves the answer unknown.
func Locate(ctx context.Context, c *framework.Client, path string) (Place, *Znode, error) {
	z, err := Load(ctx, c, path, 2)
	if err != nil {
		return Place{}, nil, err
	}
	if l := Identify(path, z); l.Kind != "" {
		return Place{Layout: l}, z, nil
	}
	unknown := Place{Layout: Layout{Path: path}}
	if path == "/" {
		return unknown, z, nil
	}
	parent, name := framework.SplitPath(path)
	pl, err := identifyAt(ctx, c, parent)
	if err != nil {
		return unknown, z, nil
	}
	if part := pl.Parts[name]; part != "" {
		return Place{Layout: pl, Part: part}, z, nil
	}
	if parent == "/" {
		return unknown, z, nil
	}
	grand, parentName := framework.SplitPath(parent)
	gl, err := identifyAt(ctx, c, grand)
	if err != nil || gl.Kind != KindSemaphoreV2 || !IsStructural(gl.Parts[parentName]) {
		return unknown, z, nil
	}
	for _, lk := range gl.Locks {
		for _, p := range append(append([]Participant{}, lk.Holders...), lk.Waiters...) {
			if p.Node == path {
				return Place{Layout: gl, Part: PartParticipant}, z, nil
			}
		}
	}
	return unknown, z, nil
}

// identifyAt loads path (depth 2) and identifies it.
func identifyAt(ctx context.Context, c *framework.Client, path string) (Layout, error) {
	z, err := Load(ctx, c, path, 2)
	if errors.Is(err, zk.ErrNoNode) {
		return Layout{Path: path}, nil
	}
	if err != nil {
		return Layout{}, err
	}
	return Identify(path, z), nil
}

// IsStructural reports whether a part is one of a recipe's own
// directories (a V2 semaphore's gate and leases): empty, it is still part
// of the recipe while the recipe is in use.
func IsStructural(part string) bool { return part == PartGate || part == PartLeases }
