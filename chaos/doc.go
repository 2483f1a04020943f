// Package chaos is gocurator's fault-tolerance proof: it runs the mutex,
// semaphore and read/write lock recipes against a three-node ZooKeeper
// ensemble while it kills, stops and restarts servers, partitions clients and
// loses create replies, records what every holder believed and what the
// servers accepted, and checks the record.
//
// # What is checked
//
// Check is a pure function over a History:
//   - safety: no two mutex holders, no more than two semaphore holders, no
//     writer beside a reader or another writer, judged on the intervals the
//     holders believed they held (from Acquire's return until the earlier of
//     the Release call and Done closing);
//   - fencing: the fenced writes the servers accepted for the mutex and the
//     write lock, in the resource node's version order, carry strictly
//     increasing fencing tokens;
//   - progress: after every fault heals, the mutex is acquired again within
//     the progress bound (twice the session timeout).
//
// Run adds the end-state checks: once workers have stopped and every fault is
// healed, no lock, lease or gate node is left, no server holds a watch and
// every client is connected.
package chaos
