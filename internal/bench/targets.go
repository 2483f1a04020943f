package bench

import (
	"fmt"
	"io"
)

// Target is one goal from the issues, checked against a run.
type Target struct {
	Goal     string  `json:"goal"`
	Measured string  `json:"measured"`
	Value    float64 `json:"value,omitempty"`
	Want     float64 `json:"want,omitempty"`
	// Status is "MET", "MISSED" or "n/a" (not measured in this run).
	Status string `json:"status"`
}

// Targets checks the goals of the issues against rows (at clients) and the
// uncontended measurement (nil if not run).
func Targets(rows Rows, clients int, un *UncontendedResult) []Target {
	var out []Target
	atLeast := func(goal string, v float64, ok bool, want float64, what string) {
		t := Target{Goal: goal, Want: want, Status: "n/a"}
		if ok {
			t.Value, t.Measured = v, fmt.Sprintf("%.2fx %s", v, what)
			t.Status = "MISSED"
			if v >= want {
				t.Status = "MET"
			}
		} else {
			t.Measured = "not measured (a row it needs was not run or failed)"
		}
		out = append(out, t)
	}
	ours := func(workload string) Result {
		r, _ := rows.find(workload, ImplOurs, clients)
		return r
	}
	ratio := func(workload, baseWorkload, baseImpl string) (float64, bool) {
		r, ok := rows.find(workload, ImplOurs, clients)
		if !ok {
			return 0, false
		}
		return rows.ratio(r, baseWorkload, baseImpl)
	}

	v, ok := ratio(Mutex, Mutex, ImplCurator)
	atLeast("mutex throughput >= 2x Curator InterProcessMutex", v, ok, 2, "of Curator")
	v, ok = ratio(Mutex, Mutex, ImplZKLock)
	atLeast("mutex throughput >= 1.5x go-zookeeper zk.Lock", v, ok, 1.5, "of zk.Lock")

	t := Target{Goal: "mutex p99 <= 1/2 of Curator's p99", Want: 0.5, Status: "n/a", Measured: "not measured (a row it needs was not run or failed)"}
	if cur, ok := rows.find(Mutex, ImplCurator, clients); ok && ours(Mutex).OK() && cur.P99Ms > 0 {
		t.Value = ours(Mutex).P99Ms / cur.P99Ms
		t.Measured = fmt.Sprintf("%.2f ms vs %.2f ms = %.2f of Curator's", ours(Mutex).P99Ms, cur.P99Ms, t.Value)
		t.Status = "MISSED"
		if t.Value <= 0.5 {
			t.Status = "MET"
		}
	}
	out = append(out, t)

	t = Target{Goal: "uncontended mutex within 5% of raw create+list+delete", Want: 0.95, Status: "n/a", Measured: "not measured"}
	if un != nil && un.Ratio > 0 {
		t.Value = un.Ratio
		t.Measured = fmt.Sprintf("%.3fx raw (median of %d paired rounds; pooled %.0f vs %.0f cycles/s)", un.Ratio, len(un.RoundRatios), un.Mutex.OpsPerSec, un.Raw.OpsPerSec)
		t.Status = "MISSED"
		if un.Ratio >= 0.95 {
			t.Status = "MET"
		}
	}
	out = append(out, t)

	v, ok = ratio(Read, Raw, ImplRaw)
	atLeast("read lock >= 90% of raw floor", v, ok, 0.9, "of raw floor")
	v, ok = ratio(Read, Read, ImplCurator)
	atLeast("read lock >= 1.2x Curator readLock", v, ok, 1.2, "of Curator")
	v, ok = ratio(Semaphore, SemaphoreV2, ImplCurator)
	atLeast("semaphore (loop mode) >= 4x Curator InterProcessSemaphoreV2", v, ok, 4, "of Curator V2")
	v, ok = ratio(SemaphoreV2, SemaphoreV2, ImplCurator)
	atLeast("semaphore V2 mode >= 1.5x Curator InterProcessSemaphoreV2", v, ok, 1.5, "of Curator V2")
	return out
}

// WriteTargets prints the targets, one per line.
func WriteTargets(w io.Writer, ts []Target) {
	cells := [][]string{{"target", "measured", "status"}}
	for _, t := range ts {
		cells = append(cells, []string{t.Goal, t.Measured, t.Status})
	}
	writeCells(w, cells, 99)
}
