package zkwire

import "github.com/go-zookeeper/zk"

// Request sizes, as go-zookeeper encodes requests: a header of xid and
// opcode, then the body; an int32 is 4 bytes, a bool 1, a string or buffer
// its int32 length and its bytes. The client checks them against the
// servers' jute.maxbuffer before it sends.
const (
	RequestHeaderLen = 4 + 4     // xid, opcode
	MultiHeaderLen   = 4 + 1 + 4 // a transaction's op header: type, done, err
)

// StringLen is the encoded size of s.
func StringLen(s string) int { return 4 + len(s) }

// BufferLen is the encoded size of b.
func BufferLen(b []byte) int { return 4 + len(b) }

// ACLLen is the encoded size of acl.
func ACLLen(acl []zk.ACL) int {
	n := 4
	for _, a := range acl {
		n += 4 + StringLen(a.Scheme) + StringLen(a.ID)
	}
	return n
}

// CreateBodyLen is the size of a create request's body (path, data, ACL,
// flags, and for TTL modes the TTL).
func CreateBodyLen(path string, data []byte, acl []zk.ACL, ttl bool) int {
	n := StringLen(path) + BufferLen(data) + ACLLen(acl) + 4
	if ttl {
		n += 8
	}
	return n
}

// SetDataBodyLen is the size of a set-data request's body (path, data,
// version).
func SetDataBodyLen(path string, data []byte) int { return StringLen(path) + BufferLen(data) + 4 }

// PathBodyLen is the size of the body of a request that carries a path
// and a 4-byte version (delete, check).
func PathBodyLen(path string) int { return StringLen(path) + 4 }

// ReadLen is the size of an exists, get or children request (header,
// path and a 1-byte watch flag).
func ReadLen(path string) int { return RequestHeaderLen + StringLen(path) + 1 }
