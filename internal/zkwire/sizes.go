package zkwire

import "github.com/go-zookeeper/zk"

// Request sizes, as go-zookeeper encodes requests: a header of xid and
// opcode, then the body; an int32 is 4 bytes, a bool 1, a string or buffer
// its int32 length and its bytes.
const (
	// ReqHeaderSize is a request header: xid, opcode.
	ReqHeaderSize = 4 + 4
	// MultiHeaderSize is a transaction operation's header: type, done, err.
	MultiHeaderSize = 4 + 1 + 4
)

// StrSize is the encoded size of a string: its int32 length, its bytes.
func StrSize(s string) int { return 4 + len(s) }

// BufSize is the encoded size of a buffer: its int32 length, its bytes.
func BufSize(b []byte) int { return 4 + len(b) }

// ACLSize is the encoded size of an ACL list.
func ACLSize(acl []zk.ACL) int {
	n := 4
	for _, a := range acl {
		n += 4 + StrSize(a.Scheme) + StrSize(a.ID)
	}
	return n
}

// CreateBodySize is the size of a create request's body (path, data, ACL,
// flags, and for TTL modes the TTL).
func CreateBodySize(full string, data []byte, acl []zk.ACL, ttl bool) int {
	n := StrSize(full) + BufSize(data) + ACLSize(acl) + 4
	if ttl {
		n += 8
	}
	return n
}

// SetBodySize is the size of a set-data request's body (path, data, version).
func SetBodySize(full string, data []byte) int { return StrSize(full) + BufSize(data) + 4 }

// PathBodySize is the size of the body of a request that carries a path
// and a 4-byte version (delete, check).
func PathBodySize(full string) int { return StrSize(full) + 4 }

// ReadSize is the size of an exists, get or children request (path and a
// 1-byte watch flag).
func ReadSize(full string) int { return ReqHeaderSize + StrSize(full) + 1 }
