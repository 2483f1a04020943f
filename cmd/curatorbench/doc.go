// Command curatorbench measures gocurator's lock recipes on a real
// ZooKeeper and compares them with the raw requests a lock cannot do
// without, with go-zookeeper's own lock and with Apache Curator (Java).
//
// # Usage
//
//	go run ./cmd/curatorbench [flags]
//	make bench BENCH_ARGS='-clients 8 -warmup 5s -duration 10s'
//
//	go run ./cmd/curatorbench -clients 8 -warmup 5s -duration 10s -json out.json
//	go run ./cmd/curatorbench -workloads mutex,read -peers=false
//	go run ./cmd/curatorbench -workloads none -sweep 1,2,4,8 -plot mutex.svg
//	go run ./cmd/curatorbench -scale
//	go run ./cmd/curatorbench -workloads none -uncontended=false -diagnose -duration 20s
//
// Without -zk it starts a throwaway ZooKeeper through zktest.Launch (the
// jars of Debian's zookeeper package, or ZOOKEEPER_HOME), with its data
// directory on tmpfs (/dev/shm, -zk-dir) so that the transaction log is not
// a disk benchmark, the full JIT and a 512 MiB heap, and stops it at the
// end. -zk host:port[,host:port...] uses a running ensemble instead. Before
// the first run, -zk-warmup (10s) of unmeasured cycles lets the server's JIT
// compile its request path.
//
// # Workloads
//
// Every run has -clients clients, each with its own ZooKeeper session and
// goroutine, looping acquire → release on one lock path for -warmup, then
// for the measured -duration. Throughput counts the cycles that started and
// finished in the measured period; latency is from calling acquire until
// the lock (or lease) is held, reported at p50 and p99.
//
//	raw           the floor: create EPHEMERAL_SEQUENTIAL + getChildren, then
//	              delete, on go-zookeeper directly (no protection, no waiting)
//	mutex         recipes/mutex; peers: go-zookeeper zk.Lock, Curator
//	              InterProcessMutex
//	read          recipes/rwlock read lock, readers only; peer: Curator readLock
//	write         recipes/rwlock write lock; peer: Curator writeLock (the
//	              zk.Lock column uses the mutex row of go-zookeeper)
//	semaphore     recipes/semaphore in the lock loop's layout (V1),
//	              -max-leases leases; peer: Curator InterProcessSemaphoreV2
//	semaphore-v2  recipes/semaphore with CuratorV2(); same peer
//
// -workloads selects them (default: all that are built in); a workload whose
// recipe package is missing is reported as skipped. With -peers (default)
// go-zookeeper's lock and Curator run too; Curator needs java, javac and
// Debian's Curator jars (libcurator-recipes-java) and is reported as
// "Curator: skipped (reason)" when they are missing. Curator runs in its own
// JVM through internal/curatorjava (Bench.java), its JIT warmed by the same
// warm-up.
//
// -uncontended (default true) then compares one client of our mutex with one
// client of raw in 10 alternating rounds and prints the median of the
// rounds' ratios (each round runs the two back to back, so a burst of load
// from other processes skews one pair, not one side) and the pooled ratio.
// -diagnose takes that difference apart, one cost per step: raw; raw plus
// the exists of its own node that the lock loop sends next to its first
// getChildren; the raw requests through the framework client; with the
// loop's protected create and guaranteed delete; plus the exists; the
// mutex; and the last two without a ctx deadline. It also adds a contended row to the
// mutex workload, "sketch: no re-read": the same protocol on go-zookeeper
// minus the read the lock loop makes after the watch on the node ahead
// fires, which shows what that read costs a hand-over.
//
// -rounds N runs every workload N times, interleaved, and reports for each
// row the round with the median throughput, with every round's throughput in
// an extra column: on a shared machine one round is not enough.
//
// # Output
//
// A header line (date, cores, uname -sr, ZooKeeper version from srvr,
// server and data directory, Go version, Curator jar), then one table:
// workload | impl | clients | ops/s | p50 ms | p99 ms | ratio of throughput
// vs Curator, vs go-zookeeper's zk.Lock (exclusive workloads) and vs the raw
// floor at the same client count; what was skipped; the uncontended ratio;
// and the targets of the issues with MET, MISSED or n/a. Progress goes to
// stderr. -json writes everything to a file.
//
// -sweep 1,2,4,8 runs the mutex workload (ours and the peers) at those client
// counts; -plot out.svg draws its throughput against clients (sweeping
// 1,2,4,... up to -clients when -sweep is not given).
//
// # Scale
//
// -scale runs only the scale scenario: queues of 10, 100 and 1,000 waiting
// mutex handles (-scale-waiters) spread over 50 clients (-scale-clients)
// behind one holder, released one after the other, each waiter releasing as
// soon as it holds. Short queues are repeated until about 1,000 hand-overs
// were timed. It checks that every waiter is served in the order of its
// node's sequence number (OK/FAIL), prints the mean, p50 and p99 time of a
// hand-over (a release call until the next Acquire returns) for each queue
// length, which should stay flat, and the heap and stack growth per waiting
// handle (runtime.MemStats after GC). The largest queue is run once more
// with all its waiters on a single new client, whose heap (connection
// included) the target wants under 20 MiB.
//
// -cpuprofile writes a CPU profile of the command for go tool pprof.
package main
