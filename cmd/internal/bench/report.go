package bench

import (
	"encoding/json"
	"os"
)

// Report is everything one run of the command measured, as written by
// -json.
type Report struct {
	Header   Header   `json:"header"`
	Settings Settings `json:"settings"`
	// Tables holds the rows of every round-trip time, in the order run.
	Tables []Table `json:"tables,omitempty"`
	Sweep  Rows    `json:"sweep,omitempty"`
	Scale  *Scale  `json:"scale,omitempty"`
	// Discovery holds the service discovery rows (-discovery).
	Discovery *DiscoveryReport `json:"discovery,omitempty"`
	// Atomic holds the atomic counter and double barrier rows (-atomic).
	Atomic *AtomicReport `json:"atomic,omitempty"`
	// Queue holds the queue rows (-queue).
	Queue *QueueReport `json:"queue,omitempty"`
	// Watch holds the watch-delivery rows of every round-trip time (-watch).
	Watch []WatchTable `json:"watch,omitempty"`
	// Cache holds the cache load rows of every round-trip time (-cache).
	Cache   []CacheTable `json:"cache,omitempty"`
	Skipped []string     `json:"skipped,omitempty"`
}

// Settings are the command's measuring settings.
type Settings struct {
	Clients   int      `json:"clients"`
	Warmup    string   `json:"warmup"`
	Duration  string   `json:"duration"`
	Rounds    int      `json:"rounds"`
	RTTs      []string `json:"rtts"`
	MaxLeases int      `json:"max_leases"`
	Peers     bool     `json:"peers"`
	// Hold is the critical section of the extra contended mutex row.
	Hold string `json:"hold,omitempty"`
	// Many is the sessions of the extra contended mutex row, run at
	// ManyRTTs.
	Many     int      `json:"many,omitempty"`
	ManyRTTs []string `json:"many_rtts,omitempty"`
	// OpWindow is the request trace's window after each measured period
	// of the first round.
	OpWindow string `json:"op_window,omitempty"`
	// Watch is the watch-delivery benchmark's settings (-watch).
	Watch *WatchSettings `json:"watch_settings,omitempty"`
	// CacheTrees are the trees the cache load rows load (-cache).
	CacheTrees []string `json:"cache_trees,omitempty"`
	// Command is the command line.
	Command string `json:"command,omitempty"`
}

// WriteJSON writes r, indented, to path.
func (r *Report) WriteJSON(path string) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// WatchSettings are the watch-delivery benchmark's settings.
type WatchSettings struct {
	Tree    int `json:"tree"`
	Samples int `json:"samples"`
	Burst   int `json:"burst"`
	Writers int `json:"writers"`
}
