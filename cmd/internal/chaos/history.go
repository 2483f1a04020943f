package chaos

import "time"

// Recipe names, used in intervals, writes and reports.
const (
	RecipeMutex     = "mutex"
	RecipeLongMutex = "long-mutex" // a mutex held for about a session timeout, like a leader's
	RecipeSemaphore = "semaphore"
	RecipeRead      = "read"
	RecipeWrite     = "write"
	// RecipeCohort is a mutex whose handles on each client share one node
	// and hand the hold over locally (mutex.WithLocalHandover).
	RecipeCohort = "cohort-mutex"
	// RecipeElection is a leader election (recipes/leader, latch layout):
	// a hold is a term, from Campaign's return to the Resign call or the
	// moment the term's Done was seen closed.
	RecipeElection = "election"
)

// Workloads: the same recipes on their own paths, by clients with the
// standard error policy (Suspended ends a hold) or the session policy (only
// Lost does).
const (
	WorkloadStandard = "standard"
	WorkloadSession  = "session"
)

// Workloads lists the workloads of a run.
var Workloads = []string{WorkloadStandard, WorkloadSession}

// Interval is one hold as its holder believed it: from Acquire's return to
// the earlier of the Release call and the moment Done was seen closed.
type Interval struct {
	Workload string
	Recipe   string
	Lock     string // the lock's path: holds of one lock are judged together
	Client   int
	Holder   string
	Start    time.Time
	End      time.Time
	Token    int64
	Lost     bool // Done closed before Release was called
}

// Write is one fenced write the server accepted: the resource node's new
// version and the token written.
type Write struct {
	Workload string
	Recipe   string
	Resource string // the node written: versions are per resource
	Holder   string
	// Client numbers the holder's client: the local holders of a cohort's
	// node share its token, so equal tokens are in order within a client.
	Client  int
	Version int32
	Token   int64
}

// Fault is one injected fault: what, when it began and when it was healed.
type Fault struct {
	Kind   string
	Detail string
	Start  time.Time
	Heal   time.Time
}

// History is everything a run records, the input of Check.
type History struct {
	Start     time.Time
	End       time.Time // workers stopped
	Workloads []string  // progress is judged for each; empty: those of Intervals
	Intervals []Interval
	Writes    []Write
	Faults    []Fault
}
