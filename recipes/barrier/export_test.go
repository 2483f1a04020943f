package barrier

// Wakeups returns how many events made the member's waits look again.
func Wakeups(d *Double) int64 { return d.wakeups.Load() }

// Node returns the member's node path.
func Node(d *Double) string { return d.node }

// LeaveWaits returns how many times Leave began to wait for a member.
func LeaveWaits(d *Double) int64 { return d.waits.Load() }

// BarrierWakeups returns how many events made the barrier's Wait look
// again.
func BarrierWakeups(b *Barrier) int64 { return b.wakeups.Load() }

// Opened returns the czxid of the ready node that let the member in.
func Opened(d *Double) int64 { return d.opened }
