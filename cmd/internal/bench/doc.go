// Package bench is the measuring part of cmd/curatorbench: closed-loop lock
// workloads on a real ZooKeeper, the Apache Curator and go-zookeeper peers
// they are compared with, the uncontended and scale scenarios, and the
// table, JSON and SVG output.
//
// # Workloads
//
// A workload is one small function that turns a [Worker] (one simulated
// client: its own ZooKeeper session, its own goroutine) into a [Locker], a
// pair of acquire and release calls on the run's lock path. [Run] starts the
// workers, loops acquire → release on every one of them through a warm-up
// and a measured period, and reports throughput (completed cycles per
// second) and the acquire latency (from calling acquire until held) at p50,
// p90 and p99. A cycle counts when it both started and finished inside the
// measured period, as in Curator's side of the comparison (Bench.java).
//
// It is not part of the library's API.
package bench
