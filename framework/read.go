package framework

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/internal/telemetry/clienttel"
	"github.com/gocurator/curator/internal/zkconn"
	"github.com/gocurator/curator/internal/zkwire"
)

// Exists returns the node's Stat, or nil (and no error) if there is none.
func (c *Client) Exists(ctx context.Context, path string) (*zk.Stat, error) {
	if c == nil {
		return nil, ErrNilClient
	}
	if err := ValidatePath(path); err != nil {
		return nil, err
	}
	if err := c.checkSize("exists", zkwire.ReadSize(c.full(path)), 0); err != nil {
		return nil, fmt.Errorf("exists %s: %w", path, err)
	}
	var stat *zk.Stat
	err := c.do(ctx, clienttel.OpExists, func(conn *zk.Conn) error {
		// zk.Conn.Exists answers true with a zero Stat when the request
		// fails; only a successful attempt's answer counts, and a retry's
		// "no node" must not keep an earlier attempt's stat.
		stat = nil
		ok, st, err := conn.Exists(c.full(path))
		if err == nil && ok {
			stat = st
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("exists %s: %w", path, err)
	}
	return stat, nil
}

// ExistsW is Exists that also sets a watch, fired by the node's creation,
// deletion or data change. Prefer GetW to watch a node that should exist:
// an exists watch on a missing node stays on the server until the node is
// created.
func (c *Client) ExistsW(ctx context.Context, path string) (*zk.Stat, <-chan zk.Event, error) {
	if c == nil {
		return nil, nil, ErrNilClient
	}
	if err := ValidatePath(path); err != nil {
		return nil, nil, err
	}
	if err := c.checkSize("exists", zkwire.ReadSize(c.full(path)), 0); err != nil {
		return nil, nil, fmt.Errorf("exists %s: %w", path, err)
	}
	var (
		stat *zk.Stat
		ch   <-chan zk.Event
	)
	err := c.do(ctx, clienttel.OpExists, func(conn *zk.Conn) error {
		full := c.full(path)
		if local, undo := c.pw.OneShot(full, zkconn.KindExist); local != nil {
			// Served by the path's persistent watch (internal/zkconn).
			stat = nil
			ok, st, err := conn.Exists(full)
			if err != nil {
				undo()
			}
			if err == nil && ok {
				stat = st
			}
			ch = local
			return err
		}
		// Counted before it is set (see internal/zkconn, "The watch reset gate"): a data watch if
		// the node exists, an exist watch if not.
		c.set.Add(full, zkconn.KindData, 1)
		c.set.Add(full, zkconn.KindExist, 1)
		stat = nil
		ok, st, w, err := conn.ExistsW(full)
		switch {
		case err != nil:
			c.set.Add(full, zkconn.KindData, -1)
			c.set.Add(full, zkconn.KindExist, -1)
		case ok:
			c.set.Add(full, zkconn.KindExist, -1)
		default:
			c.set.Add(full, zkconn.KindData, -1)
		}
		if err == nil && ok {
			stat = st
		}
		ch = w
		return err
	})
	if err != nil {
		return nil, nil, fmt.Errorf("exists %s: %w", path, err)
	}
	return stat, c.watch(ch, path), nil
}

// GetOption modifies Get, GetW and GetWOrdered, like Curator's getData()
// builder: Decompressed, Uncompressed.
type GetOption interface {
	applyGet(*getOptions) error
}

type getOptions struct {
	// decompress is the call's compression choice (compress.go).
	decompress compressChoice
}

// getOpts applies opts.
func getOpts(opts []GetOption) (getOptions, error) {
	var o getOptions
	for i, opt := range opts {
		if opt == nil {
			return o, invalid("get option %d is nil", i)
		}
		if err := opt.applyGet(&o); err != nil {
			return o, err
		}
	}
	return o, nil
}

// Get returns the node's data and Stat; zk.ErrNoNode (wrapped) if missing.
func (c *Client) Get(ctx context.Context, path string, opts ...GetOption) ([]byte, *zk.Stat, error) {
	if c == nil {
		return nil, nil, ErrNilClient
	}
	o, err := getOpts(opts)
	if err != nil {
		return nil, nil, err
	}
	if err := ValidatePath(path); err != nil {
		return nil, nil, err
	}
	if err := c.checkSize("get", zkwire.ReadSize(c.full(path)), 0); err != nil {
		return nil, nil, fmt.Errorf("get %s: %w", path, err)
	}
	var (
		data []byte
		stat *zk.Stat
	)
	err = c.do(ctx, clienttel.OpGet, func(conn *zk.Conn) error {
		d, st, err := conn.Get(c.full(path))
		data, stat = d, st
		return err
	})
	if err == nil {
		data, err = c.decompress(o.decompress, path, data)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("get %s: %w", path, err)
	}
	return data, stat, nil
}

// GetW is Get that also sets a watch, fired once by the node's deletion or
// data change. When the node is missing, no watch is left on the server.
func (c *Client) GetW(ctx context.Context, path string, opts ...GetOption) ([]byte, *zk.Stat, <-chan zk.Event, error) {
	if c == nil {
		return nil, nil, nil, ErrNilClient
	}
	data, stat, ch, err := c.GetWOrdered(ctx, path, opts...)
	if err != nil {
		return nil, nil, nil, err
	}
	return data, stat, c.watch(ch, path), nil
}

// GetWOrdered is GetW for code that must know the order of its watches'
// events, such as a lock deciding that its own node still exists because
// the deletion of the node ahead came before any event on its own: the
// channel is go-zookeeper's own, filled as the frames arrive, so once an
// event has been received from one such channel, every event the session
// was sent before it is already in its channel. The event's Path is the
// server's (with the chroot and namespace). The order holds within one
// connection to a server: after a reconnection (Suspended, Reconnected)
// watches are set again and fire in no particular order, so such code must
// not rely on it across a state change (StateChanged tells).
func (c *Client) GetWOrdered(ctx context.Context, path string, opts ...GetOption) ([]byte, *zk.Stat, <-chan zk.Event, error) {
	if c == nil {
		return nil, nil, nil, ErrNilClient
	}
	o, err := getOpts(opts)
	if err != nil {
		return nil, nil, nil, err
	}
	if err := ValidatePath(path); err != nil {
		return nil, nil, nil, err
	}
	if err := c.checkSize("get", zkwire.ReadSize(c.full(path)), 0); err != nil {
		return nil, nil, nil, fmt.Errorf("get %s: %w", path, err)
	}
	var (
		data []byte
		stat *zk.Stat
		ch   <-chan zk.Event
	)
	err = c.do(ctx, clienttel.OpGet, func(conn *zk.Conn) error {
		full := c.full(path)
		if local, undo := c.pw.OneShot(full, zkconn.KindData); local != nil {
			// Served by the path's persistent watch (internal/zkconn).
			d, st, err := conn.Get(full)
			if err != nil {
				undo()
				local = nil
			}
			data, stat, ch = d, st, local
			return err
		}
		c.set.Add(full, zkconn.KindData, 1) // before it is set: see internal/zkconn
		d, st, w, err := conn.GetW(full)
		if err != nil {
			c.set.Add(full, zkconn.KindData, -1)
		}
		data, stat, ch = d, st, w
		return err
	})
	if err == nil {
		if data, err = c.decompress(o.decompress, path, data); err != nil {
			// The caller gets no channel: the watch goes back, so
			// that none is left on the server (pitfall 9).
			if uerr := c.Unwatch(ctx, path, DataWatch); uerr != nil {
				err = errors.Join(err, uerr)
			}
		}
	}
	if err != nil {
		return nil, nil, nil, fmt.Errorf("get %s: %w", path, err)
	}
	return data, stat, ch, nil
}

// SetOption modifies Set, like Curator's setData() builder: Compressed,
// Uncompressed, Idempotent.
type SetOption interface {
	applySet(*setOptions) error
}

type setOptions struct {
	// compress is the call's compression choice (compress.go).
	compress compressChoice
	// idempotent makes a BadVersion that our own earlier write explains a
	// success (idempotent.go).
	idempotent bool
}

// Set writes data if the node's version is version (-1: any) and returns the
// new Stat. A version mismatch is zk.ErrBadVersion (wrapped), a missing node
// zk.ErrNoNode. It runs under the retry policy; a set whose reply was lost
// may have been applied, and its retry then fails with zk.ErrBadVersion
// unless the call is Idempotent. When ctx ends, Set returns ctx's error at
// once, and a request already sent may still be applied: a write cannot be
// taken back (unlike a create, whose node the client deletes). A caller
// that must know the outcome waits with a ctx that outlives the reply
// (context.WithoutCancel with a bound of its own), or reads the node again
// after a Sync.
func (c *Client) Set(ctx context.Context, path string, data []byte, version int32, opts ...SetOption) (*zk.Stat, error) {
	if c == nil {
		return nil, ErrNilClient
	}
	var o setOptions
	for i, opt := range opts {
		if opt == nil {
			return nil, invalid("set option %d is nil", i)
		}
		if err := opt.applySet(&o); err != nil {
			return nil, err
		}
	}
	if err := ValidatePath(path); err != nil {
		return nil, err
	}
	if version < -1 {
		return nil, invalid("version %d", version)
	}
	data, err := c.compress(o.compress, path, data)
	if err != nil {
		return nil, fmt.Errorf("set %s: %w", path, err)
	}
	if err := c.checkSize("set", zkwire.ReqHeaderSize+zkwire.SetBodySize(c.full(path), data), len(data)); err != nil {
		return nil, fmt.Errorf("set %s: %w", path, err)
	}
	var stat *zk.Stat
	err = c.do(ctx, clienttel.OpSet, func(conn *zk.Conn) error {
		st, err := c.setOnce(conn, path, data, version, &o)
		stat = st
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("set %s: %w", path, err)
	}
	return stat, nil
}

// Children returns the names of the node's children (unsorted) and its Stat.
func (c *Client) Children(ctx context.Context, path string) ([]string, *zk.Stat, error) {
	if c == nil {
		return nil, nil, ErrNilClient
	}
	if err := ValidatePath(path); err != nil {
		return nil, nil, err
	}
	if err := c.checkSize("children", zkwire.ReadSize(c.full(path)), 0); err != nil {
		return nil, nil, fmt.Errorf("children %s: %w", path, err)
	}
	var (
		children []string
		stat     *zk.Stat
	)
	err := c.do(ctx, clienttel.OpChildren, func(conn *zk.Conn) error {
		ch, st, err := conn.Children(c.full(path))
		children, stat = ch, st
		return err
	})
	if err != nil {
		return nil, nil, fmt.Errorf("children %s: %w", path, err)
	}
	return children, stat, nil
}

// ChildrenW is Children that also sets a watch, fired once by a child's
// creation or deletion, or the node's deletion.
func (c *Client) ChildrenW(ctx context.Context, path string) ([]string, *zk.Stat, <-chan zk.Event, error) {
	if c == nil {
		return nil, nil, nil, ErrNilClient
	}
	if err := ValidatePath(path); err != nil {
		return nil, nil, nil, err
	}
	if err := c.checkSize("children", zkwire.ReadSize(c.full(path)), 0); err != nil {
		return nil, nil, nil, fmt.Errorf("children %s: %w", path, err)
	}
	var (
		children []string
		stat     *zk.Stat
		ch       <-chan zk.Event
	)
	err := c.do(ctx, clienttel.OpChildren, func(conn *zk.Conn) error {
		full := c.full(path)
		if local, undo := c.pw.OneShot(full, zkconn.KindChild); local != nil {
			// Served by the path's persistent watch (internal/zkconn).
			c2, st, err := conn.Children(full)
			if err != nil {
				undo()
				local = nil
			}
			children, stat, ch = c2, st, local
			return err
		}
		c.set.Add(full, zkconn.KindChild, 1) // before it is set: see internal/zkconn
		c2, st, w, err := conn.ChildrenW(full)
		if err != nil {
			c.set.Add(full, zkconn.KindChild, -1)
		}
		children, stat, ch = c2, st, w
		return err
	})
	if err != nil {
		return nil, nil, nil, fmt.Errorf("children %s: %w", path, err)
	}
	return children, stat, c.watch(ch, path), nil
}
