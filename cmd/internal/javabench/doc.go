// Package javabench runs Bench.java, a closed-loop benchmark of Apache
// Curator's lock recipes with one Curator client per worker thread, for the
// comparison of cmd/curatorbench; it is the benchmark half of the library's
// internal/curatorjava, which keeps the driver the interop tests use and
// compiles and starts the JVM for both.
//
// [Measure] runs a benchmark and returns its measurements. [Start] lets the
// caller drive its phases (warm-up, measured, an unmeasured count window,
// stop) so that it can read the server's counters at the boundaries; at
// each switch the JVM reports its process CPU time and the cycles
// completed.
//
// [StartWatch] runs WatchBench.java, one Curator subscriber of the
// watch-delivery benchmark (watchers().add(), TreeCache or CuratorCache)
// that reports when it saw each change, or, in its load mode, a
// CuratorCache's initial load time and retained heap.
//
// [RunCounters], [RunDiscovery] and [RunQueue] run the one-shot benchmarks
// of curatorbench -atomic, -discovery and -queue (CountersBench.java,
// DiscoveryBench.java, QueueBench.java), each printing one JSON line.
//
// The requirements (a JDK and the Debian packages of Curator 5) are those
// of internal/curatorjava; its errors wrap curatorjava.ErrNotInstalled when
// they are missing.
package javabench
