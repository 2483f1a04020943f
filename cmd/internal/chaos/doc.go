// Package chaos is gocurator's fault-tolerance proof: it runs the mutex,
// semaphore and read/write lock recipes against a three-node ZooKeeper
// ensemble while it kills, stops and restarts servers, partitions clients
// (loudly with zktest.Proxy.Cut, silently with zktest.Proxy.BlackHole) and
// loses create replies, records what every holder believed and what the
// servers accepted, and checks the record.
//
// # Workloads
//
// The same workers run twice, on paths of their own (Root/standard and
// Root/session), by clients with connstate.StandardPolicy (Suspended ends a
// hold) and by clients with connstate.SessionPolicy (only Lost does). Each
// client has two handles on a mutex with short holds, one on a "long" mutex
// held for one to two session timeouts (a leader's kind of hold, which a
// partition can outlast), a semaphore handle (two leases), and a reader and
// a writer of a read/write lock.
//
// # What is checked
//
// Check is a pure function over a History:
//   - safety, judged on the intervals the holders believed they held (from
//     Acquire's return until the earlier of the Release call and the instant
//     Done was seen closed), each lock on its own: any two holds of a mutex
//     by different holders that overlap in wall-clock time (each pair is
//     reported with how long both believed), more than two semaphore holders,
//     a writer beside a reader or another writer. Fencing does not excuse an
//     overlap: a holder that believes it holds may act outside ZooKeeper;
//   - fencing: the fenced writes the servers accepted for each mutex and
//     write lock, in the resource node's version order, carry strictly
//     increasing fencing tokens;
//   - progress: after every fault heals, each workload's mutex is acquired
//     again within the progress bound (twice the session timeout).
//
// Run adds the end-state checks: once workers have stopped and every fault is
// healed, no lock, lease or gate node is left, no server holds a watch and
// every client is connected.
package chaos
