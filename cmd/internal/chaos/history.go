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
	// RecipeCohortWrite is the write lock of a read/write lock whose
	// write lockers on each client hand over locally
	// (rwlock.WithLocalHandover); a plain reader shares the lock.
	RecipeCohortWrite = "cohort-write"
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

// GrantCut is one cut of the cut-grant fault, timed to land on a grant of
// the cohort mutex to Client: the node ahead of its cohort's node was seen
// deleted at Released, and the client's connections were cut at Cut.
type GrantCut struct {
	Workload string
	Client   int
	Released time.Time
	Cut      time.Time
	// Granted is the first Acquire return of the client's cohort handles
	// while the cut was armed (from the look at the queue that found the
	// client second until the cut was judged; zero if none); Refused the
	// first of their acquires that failed in that time (a grant lost
	// before the cohort took it fails the local waiters).
	Granted time.Time
	Refused time.Time
	// Judged: the client's policy is the standard one and it was still
	// Suspended grantCutHold after the cut, when its handles were asked;
	// Held names those that said they held with Done open.
	Judged bool
	Held   []string
}

// Exec losses: how a round of the exec workload ends gocurator exec's hold.
const (
	ExecCut    = "cut"    // Proxy.Cut of gocurator's connections
	ExecSilent = "silent" // Proxy.BlackHole of them
	ExecBreak  = "break"  // gocurator break --force of its lock node
)

// ExecLosses lists the exec losses, in the order rounds take them.
var ExecLosses = []string{ExecCut, ExecSilent, ExecBreak}

// ExecRound is one round of the exec workload: `gocurator exec` ran a
// process tree under the lock, its processes wrote heartbeats carrying the
// hold's fencing token, the hold was ended by Loss at Start, and another
// holder took the lock and wrote a fenced marker. Beats are counted in the
// server's order (zxid order: the sequence numbers of one parent).
type ExecRound struct {
	Round int
	Loss  string
	Start time.Time
	Token int64 // the tree's hold's
	// Beats is the number of heartbeats with Token the server accepted;
	// AfterNext of them after the next holder's marker, AfterExit after a
	// marker written as soon as gocurator had exited.
	Beats     int
	AfterNext int
	AfterExit int
	NextToken int64
	// Survivors are the tree's processes alive (not zombies) once
	// gocurator had exited.
	Survivors []string
	Exited    time.Duration // from the loss to gocurator's exit
	ExitCode  int
	Hung      bool   // gocurator had not exited three session timeouts after the loss
	Err       string // the round could not be carried out (not judged)
}

// History is everything a run records, the input of Check.
type History struct {
	Start      time.Time
	End        time.Time // workers stopped
	Workloads  []string  // progress is judged for each; empty: those of Intervals
	Intervals  []Interval
	Writes     []Write
	Faults     []Fault
	GrantCuts  []GrantCut
	ExecRounds []ExecRound
}
