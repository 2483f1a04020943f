package framework

import "net"

// localIP returns the first non-loopback IPv4 address of this host as text,
// which is what Curator writes into nodes by default; 127.0.0.1 if none.
func localIP() []byte {
	addrs, err := net.InterfaceAddrs()
	if err == nil {
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && n.IP.To4() != nil {
				return []byte(n.IP.String())
			}
		}
	}
	return []byte("127.0.0.1")
}
