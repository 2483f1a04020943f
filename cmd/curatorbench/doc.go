// Command curatorbench measures gocurator's lock recipes on a real
// ZooKeeper, at the round-trip times of a real network, against
// go-zookeeper's own lock and Apache Curator (Java) in the same run.
//
// # Usage
//
//	make bench                                   # the headline tables, RTT 0, 0.5 ms and 2 ms
//	make bench BENCH_ARGS='-rtt 0.5ms -rounds 1' # one quick table
//	make bench-disk                              # data on disk, fsync on
//
//	go run ./cmd/curatorbench [flags]
//	go run ./cmd/curatorbench -json out.json -plot docs/bench-rtt.svg
//	go run ./cmd/curatorbench -workloads all -rtt 0
//	go run ./cmd/curatorbench -workloads none -rtt 0 -sweep 1,2,4,8 -sweep-plot sweep.svg
//	go run ./cmd/curatorbench -scale -rtt 0
//	go run ./cmd/curatorbench -watch -rtt 0.5ms,2ms -rounds 5
//	go run ./cmd/curatorbench -cache -rtt 0.5ms,2ms -rounds 3
//	go run ./cmd/curatorbench -discovery -rtt 0.5ms,2ms -rounds 5
//	go run ./cmd/curatorbench -atomic -rtt 2ms -rounds 5
//	go run ./cmd/curatorbench -queue -rtt 2ms -rounds 5
//	go run ./cmd/curatorbench -registry-scale -registry-instances 1000 -registry-caches 20 -registry-procs 2
//
// docs/benchmarks.md explains every column and holds the latest figures.
//
// # Watches and caches
//
// -watch replaces the lock table with the watch-delivery table of issue 22
// at every -rtt: a change on the server to the subscriber (p50, p90, p99 of
// -watch-samples timed setData calls), the changes per second one
// subscriber keeps up with (a burst of -watch-burst writes from
// -watch-writers goroutines, then an end marker), and the server watches a
// subscription holds (wchc per session; mntr zk_watch_count over both
// tables) on a tree of -watch-tree nodes, and after it closed. Subscribers:
// framework.Watch (recursive, and on one node) and recipes/cache, next to
// Curator 5.4's watchers().add() (persistent recursive, persistent),
// TreeCache and CuratorCache, run by WatchBench.java in the same run.
//
// -cache replaces it with the initial load of issue 23: the trees of
// -cache-trees (default 10k,100k,200k:flat: mixed depth 1 to 3, and
// children of one parent) are built once, then loaded at every -rtt by
// recipes/cache and by Curator's CuratorCache: time from start to loaded,
// and live heap per node. -watch and -cache may be given together; both
// take -rounds interleaved rounds and report medians.
//
// -discovery replaces it with the service discovery rows of issue 25, at
// every -rtt: one pick of a started round-robin provider from its cache of
// -discovery-instances (ns, allocations, bytes) and registration churn
// (-discovery-churn instances registered then unregistered by
// -discovery-workers goroutines on one session: instances/s, and the
// server's reads and writes per instance), recipes/discovery next to
// Curator 5.4's curator-x-discovery, run by DiscoveryBench.java.
//
// -atomic replaces it with the counter and double barrier rows of issue
// 26, at every -rtt: increments per second of -atomic-clients clients (a
// session each) contending on one counter, -atomic-increments each (made
// by -atomic-goroutines goroutines, Java threads, per client), every
// increment tried again until it succeeds (recipes/atomic's Long next to
// Curator 5.4's DistributedAtomicLong, RetryNTimes(10, 1 ms) on both
// sides, the counter read back), and the mean round time of a double
// barrier of as many members over -atomic-rounds rounds (recipes/barrier
// next to DistributedDoubleBarrier), run by CountersBench.java.
//
// -queue replaces it with the queue rows of issue 34, at every -rtt:
// -queue-producers producers and -queue-consumers consumers (a session
// each) moving -queue-items items per producer through recipes/queue's
// Queue (without and with a lock path) and Simple, next to Curator 5.4's
// DistributedQueue and SimpleDistributedQueue (QueueBench.java): items per
// second, put-to-consume latency p50 and p99 (the put's time carried in the
// item), a consumer's round trips per item and the server's requests per
// item (mntr).
//
// -registry-scale runs the service registry at scale (issue 35) on an
// embedded ensemble of its own (-registry-ensemble members, 3): the
// command re-executes itself as -registry-procs worker processes holding
// -registry-caches ServiceCaches of one service between them, a session
// each, while a registrar registers -registry-instances instances, then
// -registry-samples more one at a time, then as many of a service nobody
// watches. It prints the live heap per session, per cache and per cached
// instance (runtime.MemStats after GC in the workers), the servers'
// watches (wchs), their JVMs' CPU time per watch event (/proc, less the
// idle servers' rate measured first for -registry-idle seconds), and the
// fan-out latency from Register's return to the first and the last
// cache's listener (both clocks are the machine's wall clock).
//
// # The network
//
// -rtt (default 0,0.5ms,2ms) lists the round-trip times to run the table
// at. For each one above zero the command starts a zktest.Proxy with a
// one-way delay of half of it (Proxy.SetDelay), in a child process of its
// own (so that its CPU time is not the Go clients'), and every client of
// every implementation connects through it; at 0 they connect directly.
// Before the runs of each round-trip time, 50 exists requests one after the
// other measure the round trip a request really sees there (the server's
// time and the proxy's timer precision included).
//
// # The server
//
// Without -zk it starts a throwaway ZooKeeper through zktest.Launch (the
// jars of Debian's zookeeper package, or ZOOKEEPER_HOME) with the full JIT
// and a 512 MiB heap, its data directory on tmpfs (/dev/shm, -zk-dir) with
// forceSync=no, so that the transaction log is not a disk benchmark. -zk-dir
// on a disk with -fsync (forceSync=yes) measures with the log synced to disk
// before every write is answered, as in production. -zk host:port[,...]
// uses a running ensemble instead (the proxy then forwards to its first
// server, and requests are not counted by type). Before the first run,
// -zk-warmup (10s) of unmeasured cycles lets the server's JIT compile its
// request path.
//
// # Workloads
//
// Every run has some sessions, each with its own ZooKeeper session and
// goroutine (Java thread for Curator), looping acquire → hold → release on
// one lock path for -warmup, then for the measured -duration. Throughput
// counts the cycles that started and finished in the measured period;
// latency is from calling acquire until the lock (or lease) is held. The
// headline (-workloads headline, the default):
//
//	mutex         recipes/mutex with -clients sessions (8), contended; peers:
//	              go-zookeeper zk.Lock, Curator InterProcessMutex. Also with a
//	              critical section of -hold (5ms), and with -many sessions (64)
//	              at the round-trip times of -many-rtt (2ms, or all).
//	uncontended   the mutex with one session: acquire+release with the lock free
//	read          recipes/rwlock read lock, readers only; peer: Curator readLock
//	semaphore     recipes/semaphore (V1 layout) with -max-leases leases (0: as
//	              many as sessions, so a lease is always free); peer: Curator
//	              InterProcessSemaphoreV2
//	election      recipes/leader (latch layout) between 2 sessions, the leader
//	              resigning after 20 ms; its p50 and p99 are the fail-over, from
//	              the leader's Resign call to the next leader's Campaign return;
//	              peer: Curator LeaderLatch (close to await's return). Not at
//	              RTT 0.
//
// and, with -workloads all or by name: raw (create EPHEMERAL_SEQUENTIAL +
// getChildren, then delete, on go-zookeeper directly: a lock's floor), write
// (recipes/rwlock write lock; peer Curator writeLock, and the zk.Lock column
// uses zk.Lock's mutex row), semaphore-v2 (recipes/semaphore with
// CuratorV2()). Curator needs java, javac and Debian's Curator jars
// (libcurator-recipes-java) and is reported as skipped when they are
// missing; it runs in a JVM of its own per run (cmd/internal/javabench's
// Bench.java), driven phase by phase by this command.
//
// -rounds N (3) runs every row N times, interleaved (each round runs every
// row once, ours, zk.Lock and Curator one after the other), and reports for
// each row the round with the median throughput, every round's throughput
// in the last column.
//
// # What is measured besides throughput and latency
//
// Around each measured period the command reads the server's own counters
// (the mntr four-letter word): requests answered without a transaction
// (zk_cnt_readlatency), requests through the transaction log
// (zk_cnt_updatelatency) and watch notifications sent
// (zk_sum_node_*_watch_count), divided by the cycles completed in the
// period. mntr has no per-type counts, so for -op-window (2s) after the
// measured period of the first round, while the loop goes on unmeasured, it
// switches on the server's request trace (PrepRequestProcessor at TRACE,
// the trace mask set with the stmk four-letter word) and counts the logged
// requests by type. Client CPU per acquisition is the process CPU time over
// the measured period divided by its cycles: this process's (getrusage) for
// the Go implementations, which run one at a time with nothing else in the
// process, the JVM's (OperatingSystemMXBean) for Curator. Allocations per
// cycle are runtime.MemStats.Mallocs over the same period (Go only).
// RTTs/cycle is the cycle time of one holder, minus the critical section,
// in measured round trips.
//
// # Output
//
// A header line (date, cores, kernel, ZooKeeper version and settings, Go,
// Curator, load average), then one table per round-trip time, what was
// skipped. The tables are Markdown; the goals a run is judged by live in the
// dated report (docs/benchmarks.md), not here. Progress goes to stderr. -json writes everything to a file;
// -plot draws the contended mutex's throughput against the round-trip time
// for the three implementations (gonum/plot; .svg, .png or .pdf by the
// file's extension).
//
// # Extras, at the first round-trip time
//
// -sweep 1,2,4,8 runs the mutex at those client counts (-sweep-plot draws
// it). The uncontended mutex against the raw floor is the table's
// "uncontended" row beside "-workloads raw".
//
// -scale runs only the scale scenario: queues of 10, 100, 1,000 and 10,000
// waiting mutex handles (-scale-waiters) spread over 100 clients
// (-scale-clients)
// behind one holder, released one after the other, each waiter releasing as
// soon as it holds. It checks FIFO order, prints the hand-over time per
// queue length (it should stay flat) and the heap and stack per waiting
// handle; the largest queue of at most 1,000 runs once more on a single
// client, whose heap the target wants under 20 MiB. (10,000 waiters on one
// session are too many: each lists the queue when it joins, 2.7 GB through
// one socket, longer than the session's ping timeout.)
//
// -replay out.json measures nothing: it prints the report of an earlier
// -json file again (and draws its -plot). -cpuprofile writes a CPU profile
// of the command for go tool pprof.
package main
