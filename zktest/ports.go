package zktest

import (
	"fmt"
	"net"
)

// freePorts returns n distinct loopback ports that were free a moment ago:
// it holds all n listeners open before closing any, so the kernel cannot
// hand out the same port twice. Another process may still take one before
// the JVM binds it; Launch retries with new ports when that happens.
func freePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	lns := make([]net.Listener, 0, n)
	defer func() {
		for _, ln := range lns {
			ln.Close()
		}
	}()
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("zktest: pick a free port: %w", err)
		}
		lns = append(lns, ln)
		ports = append(ports, ln.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
