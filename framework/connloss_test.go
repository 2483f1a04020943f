package framework

import (
	"errors"
	"io"
	"net"
	"testing"

	"github.com/go-zookeeper/zk"
)

// A socket error under a request is a connection loss, retried like one.
func TestConnectionLoss(t *testing.T) {
	broken := &net.OpError{Op: "write", Net: "tcp", Err: errors.New("broken pipe")}
	for _, tt := range []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"broken pipe", broken, true},
		{"eof", io.EOF, true},
		{"connection closed", zk.ErrConnectionClosed, true},
		{"no node", zk.ErrNoNode, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := connectionLoss(tt.err)
			if errors.Is(got, zk.ErrConnectionClosed) != tt.want || (tt.err != nil && !errors.Is(got, tt.err)) {
				t.Fatalf("connectionLoss(%v) = %v", tt.err, got)
			}
		})
	}
}
