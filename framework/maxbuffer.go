package framework

import (
	"fmt"

	"github.com/gocurator/curator/internal/zkwire"
)

// DefaultJuteMaxBuffer is ZooKeeper's default jute.maxbuffer, 0xfffff bytes
// (1 MiB less one byte): the largest request packet a server reads, not
// counting the packet's 4-byte length. A server closes the connection of a
// client that sends a larger one. Measured against ZooKeeper 3.8: a plain
// create of a 2-byte path with the open ACL takes at most 1048526 bytes of
// data (49 bytes go to the rest of the request).
const DefaultJuteMaxBuffer = 0xfffff

// authSize is the size of a set-auth request.
func authSize(a authInfo) int {
	return zkwire.ReqHeaderSize + 4 + zkwire.StrSize(a.scheme) + zkwire.BufSize(a.auth)
}

// JuteMaxBuffer returns the largest request the client sends
// (WithJuteMaxBuffer; DefaultJuteMaxBuffer unless set), which recipes
// compare their own sizes against: a listing or an item past it cannot be
// read by clients with the same limit. A nil Client returns the default.
func (c *Client) JuteMaxBuffer() int {
	if c == nil {
		return DefaultJuteMaxBuffer
	}
	return c.opts.juteMaxBuffer
}

// checkSize refuses a request of size bytes (header included) that the
// server would not read; data is how many of those bytes are node data, to
// say how much would fit.
func (c *Client) checkSize(what string, size, data int) error {
	return checkRequestSize(what, size, data, c.opts.juteMaxBuffer)
}

func checkRequestSize(what string, size, data, limit int) error {
	if size <= limit {
		return nil
	}
	if data > 0 {
		return fmt.Errorf("%w: %s request of %d bytes, %d of them data: the server's jute.maxbuffer of %d bytes leaves room for %d bytes of data",
			ErrDataTooLarge, what, size, data, limit, max(limit-(size-data), 0))
	}
	return fmt.Errorf("%w: %s request of %d bytes, over the server's jute.maxbuffer of %d bytes",
		ErrDataTooLarge, what, size, limit)
}
