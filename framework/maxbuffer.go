package framework

import (
	"fmt"

	"github.com/go-zookeeper/zk"
)

// DefaultJuteMaxBuffer is ZooKeeper's default jute.maxbuffer, 0xfffff bytes
// (1 MiB less one byte): the largest request packet a server reads, not
// counting the packet's 4-byte length. A server closes the connection of a
// client that sends a larger one. Measured against ZooKeeper 3.8: a plain
// create of a 2-byte path with the open ACL takes at most 1048526 bytes of
// data (49 bytes go to the rest of the request).
const DefaultJuteMaxBuffer = 0xfffff

// Request sizes, as go-zookeeper encodes requests: a header of xid and
// opcode, then the body; an int32 is 4 bytes, a bool 1, a string or buffer
// its int32 length and its bytes.
const (
	reqHeaderSize   = 4 + 4     // xid, opcode
	multiHeaderSize = 4 + 1 + 4 // type, done, err
)

func strSize(s string) int { return 4 + len(s) }
func bufSize(b []byte) int { return 4 + len(b) }

func aclSize(acl []zk.ACL) int {
	n := 4
	for _, a := range acl {
		n += 4 + strSize(a.Scheme) + strSize(a.ID)
	}
	return n
}

// createBodySize is the size of a create request's body (path, data, ACL,
// flags, and for TTL modes the TTL).
func createBodySize(full string, data []byte, acl []zk.ACL, ttl bool) int {
	n := strSize(full) + bufSize(data) + aclSize(acl) + 4
	if ttl {
		n += 8
	}
	return n
}

// setBodySize is the size of a set-data request's body (path, data, version).
func setBodySize(full string, data []byte) int { return strSize(full) + bufSize(data) + 4 }

// pathBodySize is the size of the body of a request that carries a path
// and a 4-byte version (delete, check).
func pathBodySize(full string) int { return strSize(full) + 4 }

// readSize is the size of an exists, get or children request (path and a
// 1-byte watch flag).
func readSize(full string) int { return reqHeaderSize + strSize(full) + 1 }

// authSize is the size of a set-auth request.
func authSize(a authInfo) int { return reqHeaderSize + 4 + strSize(a.scheme) + bufSize(a.auth) }

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
