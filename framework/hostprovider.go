package framework

import (
	"math/rand/v2"
	"slices"
	"sync"
)

// trackedHosts is the go-zookeeper HostProvider of a connection of a
// client with the ensemble tracker on: the servers to try, in a random
// order, which the tracker replaces when the ensemble changes. The live
// connection is kept; the next (re)connection picks from the new list.
// Unlike go-zookeeper's DNSHostProvider it keeps host names as they are,
// so each dial resolves them afresh (a configured DNS name is followed,
// not pinned to the address it had at connect time, CURATOR-638/664).
type trackedHosts struct {
	mu      sync.Mutex
	servers []string
	curr    int // index of the server last returned by Next; -1 for none
	last    int // index of the server last connected to; -1 for none
}

// Init is called by go-zookeeper's Connect with the servers to start from.
func (h *trackedHosts) Init(servers []string) error {
	h.update(servers)
	return nil
}

// update replaces the servers; the next Next starts a round of the new
// list.
func (h *trackedHosts) update(servers []string) {
	s := slices.Clone(servers)
	rand.Shuffle(len(s), func(i, j int) { s[i], s[j] = s[j], s[i] })
	h.mu.Lock()
	defer h.mu.Unlock()
	h.servers = s
	h.curr, h.last = -1, -1
}

// Len returns the number of servers.
func (h *trackedHosts) Len() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.servers)
}

// Next returns the next server to try; retryStart is true once every
// server has been tried since the last connection, which makes
// go-zookeeper pause a second before the next round.
func (h *trackedHosts) Next() (server string, retryStart bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.curr = (h.curr + 1) % len(h.servers)
	retryStart = h.curr == h.last
	if h.last == -1 {
		h.last = 0
	}
	return h.servers[h.curr], retryStart
}

// Connected records a successful connection.
func (h *trackedHosts) Connected() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.last = h.curr
}
