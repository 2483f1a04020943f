package framework

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/internal/telemetry/clienttel"
	"github.com/gocurator/curator/internal/zkwire"
	"github.com/gocurator/curator/retry"
)

// DeleteOption modifies Delete, like Curator's delete() builder.
type DeleteOption interface {
	applyDelete(*deleteOptions) error
}

// deleteOption is a DeleteOption that applies only to Delete.
type deleteOption func(*deleteOptions) error

func (f deleteOption) applyDelete(o *deleteOptions) error { return f(o) }

type deleteOptions struct {
	version    int32
	guaranteed bool
	children   bool
	quietly    bool
}

// WithVersion deletes only if the node's data version is v (-1: any, the
// default).
func WithVersion(v int32) DeleteOption {
	return deleteOption(func(o *deleteOptions) error {
		if v < -1 {
			return invalid("version %d", v)
		}
		o.version = v
		return nil
	})
}

// Guaranteed keeps deleting in the background, until it succeeds or the
// client closes, when the call fails for a connection problem or because ctx
// ended. The call still returns that error: the caller knows the node may
// exist for a while yet.
func Guaranteed() DeleteOption {
	return deleteOption(func(o *deleteOptions) error { o.guaranteed = true; return nil })
}

// DeletingChildren deletes the node's descendants first.
func DeletingChildren() DeleteOption {
	return deleteOption(func(o *deleteOptions) error { o.children = true; return nil })
}

// Quietly makes a missing node a success.
func Quietly() DeleteOption {
	return deleteOption(func(o *deleteOptions) error { o.quietly = true; return nil })
}

// Delete deletes the node at path, under the retry policy. A missing node is
// zk.ErrNoNode (wrapped) unless Quietly; a version mismatch zk.ErrBadVersion.
// When ctx ends, Delete returns ctx's error at once, and a request already
// on its way may still be applied: the node may be gone, or go later (with
// Guaranteed, it will). The error means "not known to be deleted", never
// "still there".
func (c *Client) Delete(ctx context.Context, path string, opts ...DeleteOption) error {
	if c == nil {
		return ErrNilClient
	}
	o := deleteOptions{version: -1}
	for i, opt := range opts {
		if opt == nil {
			return invalid("delete option %d is nil", i)
		}
		if err := opt.applyDelete(&o); err != nil {
			return err
		}
	}
	if err := ValidatePath(path); err != nil {
		return err
	}
	if path == "/" {
		return fmt.Errorf("%w: cannot delete the root", ErrInvalidPath)
	}
	// DeletingChildren lists the node first: the larger of the two.
	if err := c.checkSize("delete", zkwire.ReadSize(c.full(path)), 0); err != nil {
		return fmt.Errorf("delete %s: %w", path, err)
	}
	if ctx == nil {
		return invalid("nil context")
	}
	// A missing node on a retry means an earlier attempt was applied and
	// only its reply was lost: that is success.
	var attempts atomic.Int32
	err := c.do(ctx, clienttel.OpDelete, func(conn *zk.Conn) error {
		err := c.deleteOnce(conn, path, &o)
		if errors.Is(err, zk.ErrNoNode) && (o.quietly || attempts.Add(1) > 1) {
			return nil
		}
		if err != nil {
			attempts.Add(1)
		}
		return err
	})
	if err == nil {
		return nil
	}
	if o.guaranteed && !c.isClosed() && (retry.IsRetryable(err) || ctx.Err() != nil) {
		c.background(func(_ context.Context, conn *zk.Conn) error {
			err := c.deleteOnce(conn, path, &o)
			if errors.Is(err, zk.ErrNoNode) {
				return nil
			}
			return err
		})
	}
	return fmt.Errorf("delete %s: %w", path, err)
}

func (c *Client) deleteOnce(conn *zk.Conn, path string, o *deleteOptions) error {
	if o.children {
		if err := c.deleteChildren(conn, path); err != nil {
			return err
		}
	}
	return conn.Delete(c.full(path), o.version)
}

// deleteChildren deletes every descendant of path, depth first.
func (c *Client) deleteChildren(conn *zk.Conn, path string) error {
	children, _, err := conn.Children(c.full(path))
	if errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, ch := range children {
		p := JoinPath(path, ch)
		if err := c.deleteChildren(conn, p); err != nil {
			return err
		}
		if err := conn.Delete(c.full(p), -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
			return err
		}
	}
	return nil
}
