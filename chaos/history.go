package chaos

import "time"

// Recipe names, used in intervals, writes and reports.
const (
	RecipeMutex     = "mutex"
	RecipeSemaphore = "semaphore"
	RecipeRead      = "read"
	RecipeWrite     = "write"
)

// Interval is one hold as its holder believed it: from Acquire's return to
// the earlier of the Release call and the moment Done was seen closed.
type Interval struct {
	Recipe string
	Holder string
	Start  time.Time
	End    time.Time
	Token  int64
	Lost   bool // Done closed before Release was called
}

// Write is one fenced write the server accepted: the resource node's new
// version and the token written.
type Write struct {
	Recipe  string
	Holder  string
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
	Intervals []Interval
	Writes    []Write
	Faults    []Fault
}
