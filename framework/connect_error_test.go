package framework

import (
	"context"
	"errors"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"
)

// closedPort returns a loopback address nobody listens on: dials to it
// are refused.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// Connect to a dead server used to say only "context deadline exceeded",
// even with no deadline of the caller's (it was the connection timeout's),
// and why no session was made (connection refused, no route, TLS) reached
// only a debug log of a no-op logger. The error names the timeout that
// passed and carries the last dial error of each server tried.
func TestConnectErrorSaysWhy(t *testing.T) {
	errTLS := errors.New("tls: handshake failure")
	tests := []struct {
		name        string
		servers     int           // closed ports in the connect string
		ctxDeadline time.Duration // 0: context.Background()
		opts        []Option
		wantTimeout bool  // ErrConnectTimeout rather than the ctx's error
		wantIs      error // a dial error the result must match
		wantMsg     string
	}{
		{
			name:        "refused, no ctx deadline",
			servers:     1,
			opts:        []Option{WithConnectionTimeout(500 * time.Millisecond)},
			wantTimeout: true,
			wantIs:      syscall.ECONNREFUSED,
			wantMsg:     "connection refused",
		},
		{
			name:        "refused, ctx deadline",
			servers:     1,
			ctxDeadline: 500 * time.Millisecond,
			wantIs:      syscall.ECONNREFUSED,
			wantMsg:     "connection refused",
		},
		{
			name:        "two servers refused",
			servers:     2,
			ctxDeadline: 1500 * time.Millisecond,
			wantIs:      syscall.ECONNREFUSED,
			wantMsg:     "connection refused",
		},
		{
			// A custom dialer's error need not name the server: the
			// message adds it.
			name:    "dialer error without the address",
			servers: 1,
			opts: []Option{
				WithConnectionTimeout(500 * time.Millisecond),
				WithDialer(func(string, string, time.Duration) (net.Conn, error) { return nil, errTLS }),
			},
			wantTimeout: true,
			wantIs:      errTLS,
			wantMsg:     "tls: handshake failure",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var addrs []string
			for range tt.servers {
				addrs = append(addrs, closedPort(t))
			}
			ctx := context.Background()
			if tt.ctxDeadline > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.ctxDeadline)
				defer cancel()
			}
			c, err := Connect(ctx, strings.Join(addrs, ","), tt.opts...)
			if err == nil {
				c.Close()
				t.Fatal("Connect to a closed port succeeded")
			}
			msg := err.Error()
			t.Logf("Connect = %v", err)
			// Timeouts are contexts, whichever one passed.
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("errors.Is(err, context.DeadlineExceeded) = false, want true")
			}
			if got := errors.Is(err, ErrConnectTimeout); got != tt.wantTimeout {
				t.Errorf("errors.Is(err, ErrConnectTimeout) = %v, want %v", got, tt.wantTimeout)
			}
			if tt.wantTimeout && strings.Contains(msg, "context deadline exceeded") {
				t.Errorf("%q speaks of a context deadline the caller never set", msg)
			}
			if !errors.Is(err, tt.wantIs) {
				t.Errorf("errors.Is(err, %v) = false, want true", tt.wantIs)
			}
			if !strings.Contains(msg, tt.wantMsg) {
				t.Errorf("%q does not say %q", msg, tt.wantMsg)
			}
			for _, a := range addrs {
				if !strings.Contains(msg, "dial "+a) && !strings.Contains(msg, "dial tcp "+a) {
					t.Errorf("%q does not name the dial to %s", msg, a)
				}
			}
			if n := strings.Count(msg, "curator:"); n != 1 {
				t.Errorf("%q says curator: %d times, want once", msg, n)
			}
		})
	}
}
