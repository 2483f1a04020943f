package cache

// QueueLens returns, for each listener, how many live entries its queue
// holds (not yet delivered, not taken back): the bound a blocked listener
// must not exceed. Entries taken back are at most compactAt, or half the
// queue, before they are dropped.
func QueueLens(c *Cache) []int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	var out []int
	for l := range c.listeners {
		l.mu.Lock()
		out = append(out, len(l.q)-l.head-l.dead)
		l.mu.Unlock()
	}
	return out
}

// LoadSessionsUsed is how many sessions c's last load of more than one
// node read over.
func LoadSessionsUsed(c *Cache) int { return int(c.loadSessionsUsed.Load()) }
