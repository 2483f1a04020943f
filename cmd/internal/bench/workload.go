package bench

import (
	"context"
	"fmt"
	"strings"
)

// Implementations compared in the table.
const (
	ImplOurs = "gocurator"
	ImplRaw  = "go-zookeeper raw"
	// ImplRawWatched is the discovery churn's floor with a watch.
	ImplRawWatched = "go-zookeeper raw + watch"
	ImplZKLock     = "go-zookeeper zk.Lock"
	ImplCurator    = "Curator (Java)"
)

// Workload names, in table order.
const (
	Raw         = "raw"
	Mutex       = "mutex"
	Read        = "read"
	Write       = "write"
	Semaphore   = "semaphore"
	SemaphoreV2 = "semaphore-v2"
	// Uncontended is the mutex with one session: every acquire finds the
	// lock free (its implementations are the Mutex workloads).
	Uncontended = "uncontended"
	// Cohort is the mutex taken by many goroutines of each session (4
	// sessions x 16 goroutines): ours with local hand-over, the others
	// with one participant per goroutine, as they have no other way.
	Cohort = "cohort"
	// CohortTokens is Cohort with per-holder tokens (one round trip per
	// local hand-over): ours only, for its cost next to Cohort.
	CohortTokens = "cohort-tokens"
	// CohortProcs is Cohort with every session an OS process of its own
	// (Config.Procs): 4 processes x 16 goroutines, Curator's side 4 JVMs
	// x 16 threads, as separate clients on one machine would run it.
	CohortProcs = "cohort-procs"
	// Election is a leader election (latch layout) between two sessions
	// whose leader resigns after ElectionHold: its latencies are the
	// fail-over, from the leader's resign to the next leader's Campaign
	// return (Curator's LeaderLatch: close to await's return).
	Election = "election"
)

// Names lists every workload name the command accepts, in table order.
var Names = []string{Raw, Mutex, Uncontended, Cohort, CohortTokens, CohortProcs, Read, Write, Semaphore, SemaphoreV2, Election}

// Headline is the default set: the contended mutex, the uncontended
// acquire+release, the local hand-over, the read lock with readers only,
// the V1 semaphore with a free lease and the election's fail-over.
var Headline = []string{Mutex, Uncontended, Cohort, Read, Semaphore, Election}

// Workload is one implementation of one workload run by the Go loop.
type Workload struct {
	// Name is the workload (Mutex, Read, ...).
	Name string
	// Impl is the implementation (ImplOurs, ImplRaw, ImplZKLock).
	Impl string
	// Peer marks a comparison implementation, run only with -peers.
	Peer bool
	// New makes worker w's Locker. Connections are made through w, which
	// closes them after the run.
	New func(ctx context.Context, w *Worker) (Locker, error)
}

// Label is "name/impl", for messages.
func (wl Workload) Label() string { return wl.Name + "/" + wl.Impl }

// registry holds every workload that compiles into this binary; files that
// depend on a recipe package add theirs in init.
var registry []Workload

func register(w Workload) { registry = append(registry, w) }

// Available returns the registered workloads named name: ours, then the
// peers.
func Available(name string) []Workload {
	var out []Workload
	for _, pass := range []func(Workload) bool{
		func(w Workload) bool { return !w.Peer },
		func(w Workload) bool { return w.Peer },
	} {
		for _, w := range registry {
			if w.Name == name && pass(w) {
				out = append(out, w)
			}
		}
	}
	return out
}

// Lookup returns the workload name implemented by impl.
func Lookup(name, impl string) (Workload, bool) {
	for _, w := range registry {
		if w.Name == name && w.Impl == impl {
			return w, true
		}
	}
	return Workload{}, false
}

// ParseNames parses a comma list of workload names. "headline" (or "")
// means Headline; "all" means every workload that has an implementation of
// ours in this binary; "none" means no workload. It returns the names and, separately, those that are
// known but have no implementation compiled in yet.
func ParseNames(list string) (names, unavailable []string, err error) {
	switch strings.TrimSpace(list) {
	case "", "headline":
		return append([]string{}, Headline...), nil, nil
	case "all":
		for _, n := range Names {
			if _, ok := Lookup(registryName(n), implOf(n)); ok {
				names = append(names, n)
			} else {
				unavailable = append(unavailable, n)
			}
		}
		return names, unavailable, nil
	case "none":
		return nil, nil, nil
	}
	seen := map[string]bool{}
	for _, n := range strings.Split(list, ",") {
		n = strings.TrimSpace(n)
		if n == "" || seen[n] {
			continue
		}
		seen[n] = true
		if !known(n) {
			return nil, nil, fmt.Errorf("unknown workload %q (want %s)", n, strings.Join(Names, ","))
		}
		if _, ok := Lookup(registryName(n), implOf(n)); ok {
			names = append(names, n)
		} else {
			unavailable = append(unavailable, n)
		}
	}
	// Keep table order whatever the order on the command line.
	var ordered []string
	for _, n := range Names {
		if seen[n] && contains(names, n) {
			ordered = append(ordered, n)
		}
	}
	return ordered, unavailable, nil
}

// implOf is the implementation that must exist for a workload to run.
func implOf(name string) string {
	if name == Raw {
		return ImplRaw
	}
	return ImplOurs
}

// registryName is the registered workload that runs name.
func registryName(name string) string {
	if name == Uncontended {
		return Mutex
	}
	return name
}

func known(n string) bool { return contains(Names, n) }

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
