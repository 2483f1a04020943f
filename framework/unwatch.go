package framework

import (
	"context"
	"errors"
	"fmt"

	"github.com/gocurator/curator/internal/zkconn"
)

// WatchKind names the one-shot watch of GetW (DataWatch), ExistsW
// (ExistWatch) or ChildrenW (ChildWatch), for Unwatch.
type WatchKind int

const (
	DataWatch WatchKind = iota + 1
	ExistWatch
	ChildWatch
)

// Unwatch gives back one one-shot watch of kind on path that the caller
// set and will not wait for any more (the watch of a timed-out acquire on
// its predecessor, say), and returns once the server has dropped it, if
// nothing else needs it. A one-shot watch stays on the server until it
// fires, or the session ends; Unwatch removes it (RemoveWatches) as soon
// as no other watch of the client needs the same server watch (ZooKeeper
// keeps one data watch per path and session for GetW and ExistsW, and one
// children watch for ChildrenW, whoever asked), and keeps it out of the
// watches set again after a reconnection. The channel of the watch given
// back may still get an event. Unwatch of a watch that has fired, or was
// never set, does nothing. On a path with a persistent watch (Watch), the
// one-shot watches are served from it; Unwatch gives one back, and the
// persistent watch goes when its last user does.
//
// A watch set on the same path by another goroutine while Unwatch runs
// is set again at once (a SetWatches from the zxid of the removal, so a
// change in between fires it): it never goes silent.
func (c *Client) Unwatch(ctx context.Context, path string, kind WatchKind) error {
	if c == nil {
		return ErrNilClient
	}
	if ctx == nil {
		return invalid("nil context")
	}
	if err := ValidatePath(path); err != nil {
		return err
	}
	var k zkconn.Kind
	switch kind {
	case DataWatch:
		k = zkconn.KindData
	case ExistWatch:
		k = zkconn.KindExist
	case ChildWatch:
		k = zkconn.KindChild
	default:
		return invalid("watch kind %d", kind)
	}
	if c.isClosed() {
		return ErrClosed
	}
	err := c.pw.Unwatch(ctx, c.full(path), k)
	if code := zkconn.CodeError(0); errors.As(err, &code) {
		return fmt.Errorf("unwatch %s: %w", path, err)
	}
	return err
}
