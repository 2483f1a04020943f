package bench

import (
	"fmt"
	"io"
)

// WriteRegistry prints the registry scale run's figures.
func WriteRegistry(w io.Writer, r RegistryResult) {
	s := r.Settings
	per := s.Caches / max(s.Procs, 1)
	mib := func(b int64) float64 { return float64(b) / (1 << 20) }
	fmt.Fprintf(w, "# registry scale: %d instances of one service, %d ServiceCaches (a session each) in %d processes, %d-member ensemble\n",
		s.Instances, s.Caches, s.Procs, len(r.Members))
	fmt.Fprintf(w, "# load average at the start: %s; at the end: %s\n", r.LoadAvg, LoadAvg())
	fmt.Fprintf(w, "instance node %d B of data; listing of the service %d B (%.1f%% of jute.maxbuffer's 1 MiB default)\n",
		r.NodeBytes, r.ListingBytes, 100*float64(r.ListingBytes)/0xfffff)
	fmt.Fprintln(w)
	fmt.Fprintln(w, "## client heap (live after GC, summed over the worker processes)")
	fmt.Fprintf(w, "before connecting  %8.1f MiB\n", mib(r.HeapBaseBytes))
	fmt.Fprintf(w, "sessions           %8.1f MiB  %8.0f KiB per session\n", mib(r.HeapSessionsBytes), r.HeapPerSessionBytes()/1024)
	fmt.Fprintf(w, "caches, empty      %8.1f MiB  %8.1f KiB per cache (watcher), session not counted\n", mib(r.HeapCachesBytes), r.HeapPerCacheBytes()/1024)
	fmt.Fprintf(w, "caches, full       %8.1f MiB  %8.0f B per instance per cache; %.1f MiB per process for its %d caches\n",
		mib(r.HeapFullBytes), r.HeapPerInstanceBytes(), mib(r.HeapFullBytes-r.HeapCachesBytes)/float64(max(s.Procs, 1)), per)
	fmt.Fprintf(w, "goroutines %d in all; slowest process started its %d caches in %.0f ms\n", r.Goroutines, per, r.StartMs)
	fmt.Fprintln(w)
	fmt.Fprintln(w, "## server")
	fmt.Fprintf(w, "watches (wchs) per member: %v\n", r.WatchesPerServer)
	fmt.Fprintf(w, "idle, every session connected: %.2f s CPU in %.0f s (%.0f%% of a core), taken off the phases below\n",
		r.Idle.ServerCPUSeconds, r.Idle.Seconds, 100*r.Idle.ServerCPUSeconds/max(r.Idle.Seconds, 1e-9))
	phase := func(name string, p RegistryPhase) {
		fmt.Fprintf(w, "%-10s %6d registrations in %6.1f s: server CPU %7.2f s, %7.2f s beyond idle (%6.0f µs per registration), events sent %8d, reads %8d, writes %6d; workers' CPU %7.1f s\n",
			name, p.Registrations, p.Seconds, p.ServerCPUSeconds, p.NetServerCPUSeconds(), p.NetServerCPUSeconds()*1e6/float64(max(p.Registrations, 1)),
			p.Counters.Notifications, p.Counters.Reads, p.Counters.Writes, p.ClientCPUSeconds)
	}
	phase("bulk", r.Bulk)
	phase("samples", r.Sampled)
	phase("unwatched", r.Unwatched)
	raw := func(p RegistryPhase) float64 {
		return p.ServerCPUSeconds * 1e6 / float64(max(p.Counters.Notifications, 1))
	}
	fmt.Fprintf(w, "server CPU per event sent: bulk %.1f µs (%.1f with idle), samples %.1f µs (%.1f with idle); a registration's extra CPU per watching cache %.1f µs\n",
		r.Bulk.ServerCPUPerEventUs(), raw(r.Bulk), r.Sampled.ServerCPUPerEventUs(), raw(r.Sampled), r.MarginalCPUPerEventUs())
	if e := r.Bulk.Counters.Notifications; e > 0 {
		fmt.Fprintf(w, "workers' CPU per event received: bulk %.0f µs\n", r.Bulk.ClientCPUSeconds*1e6/float64(e))
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "## fan-out")
	fmt.Fprintf(w, "bulk: registered in %.1f s (%.0f/s, %d goroutines on one session); every cache held all after %.1f s\n",
		r.RegisterSeconds, float64(s.Instances)/r.RegisterSeconds, s.Registrars, r.CatchUpSeconds)
	fmt.Fprintf(w, "%d registrations one at a time, Register's return to the listener of the\n", s.Samples)
	fmt.Fprintf(w, "  first cache: p50 %7.1f ms  p99 %7.1f ms  max %7.1f ms\n", r.FanOutFirstMs.P50, r.FanOutFirstMs.P99, r.FanOutFirstMs.Max)
	fmt.Fprintf(w, "  %dth cache: p50 %7.1f ms  p99 %7.1f ms  max %7.1f ms\n", s.Caches, r.FanOutLastMs.P50, r.FanOutLastMs.P99, r.FanOutLastMs.Max)
}
