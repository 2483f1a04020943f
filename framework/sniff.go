package framework

import (
	"encoding/binary"
	"net"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"
)

// sniffTimeout wraps a dialer so that the session timeout the server
// negotiated is read off the connect response as it passes by: go-zookeeper
// keeps it private, and client-side expiry needs it. The response starts
// with [int32 length][int32 protocol version][int32 timeout ms].
func sniffTimeout(d zk.Dialer, dst *atomic.Int64) zk.Dialer {
	return func(network, addr string, timeout time.Duration) (net.Conn, error) {
		conn, err := d(network, addr, timeout)
		if err != nil {
			return nil, err
		}
		return &sniffConn{Conn: conn, dst: dst}, nil
	}
}

type sniffConn struct {
	net.Conn
	dst  *atomic.Int64
	head [12]byte
	n    int
}

func (s *sniffConn) Read(p []byte) (int, error) {
	n, err := s.Conn.Read(p)
	if s.n < len(s.head) && n > 0 {
		k := copy(s.head[s.n:], p[:n])
		s.n += k
		if s.n == len(s.head) {
			if ms := int32(binary.BigEndian.Uint32(s.head[8:12])); ms > 0 {
				s.dst.Store(int64(ms))
			}
		}
	}
	return n, err
}
