package discovery

import (
	"net"
	"sync"
)

// localAddress is the address Register writes for an instance without one,
// as Curator's ServiceInstanceBuilder chooses it: the first address of this
// host's interfaces that is not a loopback address, nor a link-local one
// (unless on a point-to-point interface); IPv4 first, since Curator's
// Java (preferIPv4Stack aside) lists an interface's IPv4 address first
// and Go's order within an interface differs. "" when there is none, and
// the instance is written without an address, as Curator's builder does.
// Looked up once: interfaces rarely change within a process, and Curator
// too looks when the instance is built, not when it is re-registered.
var localAddress = sync.OnceValue(func() string {
	ifaces, err := net.Interfaces()
	if err != nil {
		return ""
	}
	var v6 string
	for _, ifc := range ifaces {
		if ifc.Flags&net.FlagUp == 0 {
			continue
		}
		addrs, err := ifc.Addrs()
		if err != nil {
			continue
		}
		for _, a := range addrs {
			n, ok := a.(*net.IPNet)
			if !ok || n.IP.IsLoopback() || n.IP.IsUnspecified() {
				continue
			}
			if n.IP.IsLinkLocalUnicast() && ifc.Flags&net.FlagPointToPoint == 0 {
				continue
			}
			if ip4 := n.IP.To4(); ip4 != nil {
				return ip4.String()
			}
			if v6 == "" {
				v6 = n.IP.String()
			}
		}
	}
	return v6
})
