// Package chaos is gocurator's fault-tolerance proof: it runs the mutex,
// semaphore, read/write lock, election and queue recipes, and gocurator exec,
// against a three-node ZooKeeper ensemble while it kills, stops and
// restarts servers, partitions clients (loudly with zktest.Proxy.Cut,
// silently with zktest.Proxy.BlackHole, and with cuts timed to land on
// grants) and loses create replies, records what every holder believed and
// what the servers accepted, and checks the record.
//
// # Workloads
//
// The same workers run twice, on paths of their own (Root/standard and
// Root/session), by clients with connstate.StandardPolicy (Suspended ends a
// hold) and by clients with connstate.SessionPolicy (only Lost does). Each
// client has two handles on a mutex with short holds, one on a "long" mutex
// held for one to two session timeouts (a leader's kind of hold, which a
// partition can outlast), a semaphore handle (two leases), a reader and
// a writer of a read/write lock, three handles of a mutex with local
// hand-over (mutex.WithLocalHandover(3)), two write lockers of a second
// read/write lock with local hand-over (rwlock.WithLocalHandover(2)) and a
// reader of it, and two participants of an election. Each client also
// increments its workload's atomic counter (recipes/atomic, counter.go) and
// is a member of its workload's double barrier for as many members as the
// workload has clients, round after round (recipes/barrier,
// doublebarrier.go), and makes and ends Nodes of recipes/node in the ways
// that abandon a write (ghost.go): closed from the Recreating listener
// right after another session deleted the node, started on a ctx that ends
// mid-create, closed on a ctx that ends mid-delete.
//
// The exec workload runs the real gocurator binary (built at the start of
// the run, with the beat writer of package beat): round after round,
// `gocurator exec` holds Root/exec/lock through proxies of its own and runs
// a process tree whose processes write heartbeats carrying the hold's
// fencing token; the hold is ended by a cut, a silent partition or
// `gocurator break`, while another holder queues for the lock.
//
// The cut-grant fault cuts a client's connections within about a
// millisecond of the release of the node ahead of its cohort's node, so
// that cuts land on grants of the cohorted mutex. The cut-leave fault cuts,
// for 100-600 ms, the client of a double-barrier member that waits in Leave
// for other members of its round.
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
//     again within the progress bound (twice the session timeout);
//   - timed cuts: once a standard-policy client has been Suspended by a
//     timed cut for half a second, none of its lock handles says it holds
//     with Done open;
//   - exec: nothing of the tree outlives the hold: no heartbeat accepted
//     after a marker written once gocurator exited, none (after a loss by
//     the connection) after the next holder's first write, in zxid order,
//     and no process of the tree alive once gocurator exited;
//   - the counters, on the server at the end: the value is at least the
//     increments acknowledged and at most those plus the increments whose
//     outcome was unknown (an error other than ErrNotApplied): no update
//     lost, none counted twice;
//   - the double barriers, on the server as each member passes Enter: a
//     ready node newer than the member's own node exists (no member through
//     alone, Curator GH-1290), no more members pass one round than it was
//     made for, and no Leave returns more than 5 s after its deadline; and
//     as each Leave returns nil, no other member node of its round is left
//     (a wake-up is not the condition: issue 33's Leave that returned on a
//     reconnect while the lowest member had not left);
//   - abandoned writes, on the server two session timeouts after a Node's
//     Close returned nil: its node is not there (no ghost member or
//     instance made by a create that landed after the caller moved on);
//   - the queues, on the server at the end: every acknowledged put has
//     exactly one done marker (a failed put at most one), and once the
//     producers stop the consumers drain both queues; no simple-queue item
//     is taken twice (at most once) or was never
//     offered.
//
// Run adds the end-state checks: once workers have stopped and every fault is
// healed, no lock, lease, gate, heartbeat, double-barrier member or Node
// node is left, no server holds a watch and every client is connected.
package chaos
