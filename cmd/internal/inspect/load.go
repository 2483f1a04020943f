package inspect

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/framework"
)

// Load reads the node at path, its data and stat, and depth levels of
// nodes below it (depth 1: its children; a negative depth: everything).
// Ephemeral nodes have no children and are not listed. A child deleted
// while it is read is left out. Errors are the client's (zk.ErrNoNode for a
// missing path, zk.ErrNoAuth for a node the credentials may not read).
func Load(ctx context.Context, c *framework.Client, path string, depth int) (*Znode, error) {
	data, st, err := c.Get(ctx, path)
	if err != nil {
		return nil, err
	}
	_, name := framework.SplitPath(path)
	z := fromStat(name, data, st)
	if depth != 0 && st.NumChildren > 0 {
		if err := loadChildren(ctx, c, path, z, depth); err != nil {
			return nil, err
		}
	} else if depth != 0 {
		z.Loaded = true
	}
	return z, nil
}

func loadChildren(ctx context.Context, c *framework.Client, path string, z *Znode, depth int) error {
	names, _, err := c.Children(ctx, path)
	if err != nil {
		return err
	}
	slices.Sort(names)
	z.Loaded = true
	for _, n := range names {
		child := framework.JoinPath(path, n)
		data, st, err := c.Get(ctx, child)
		if errors.Is(err, zk.ErrNoNode) {
			continue
		}
		if err != nil {
			return err
		}
		cz := fromStat(n, data, st)
		if depth != 1 && !cz.IsEphemeral() {
			cz.Loaded = true
			if st.NumChildren > 0 {
				err := loadChildren(ctx, c, child, cz, depth-1)
				if errors.Is(err, zk.ErrNoNode) {
					continue
				}
				if err != nil {
					return err
				}
			}
		}
		z.Children = append(z.Children, cz)
	}
	return nil
}

func fromStat(name string, data []byte, st *zk.Stat) *Znode {
	return &Znode{
		Name:        name,
		Data:        data,
		Czxid:       st.Czxid,
		Ctime:       time.UnixMilli(st.Ctime).UTC(),
		Owner:       st.EphemeralOwner,
		NumChildren: st.NumChildren,
		Cversion:    st.Cversion,
		Version:     st.Version,
	}
}
