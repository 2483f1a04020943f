package bench

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"
)

// Rows is a set of results with the lookups the ratio columns need. The
// rows of one Rows share a round-trip time (see Table).
type Rows []Result

// find returns the row of workload and impl at clients and hold.
func (rs Rows) find(workload, impl string, clients int, holdMs float64) (Result, bool) {
	for _, r := range rs {
		if r.Workload == workload && r.Impl == impl && r.Clients == clients && r.HoldMs == holdMs && r.OK() {
			return r, true
		}
	}
	return Result{}, false
}

// VsCurator is r's throughput over Curator's in the same scenario (the
// semaphores against InterProcessSemaphoreV2, Curator's only semaphore).
func (rs Rows) VsCurator(r Result) (float64, bool) {
	name := r.Workload
	if name == CohortTokens {
		name = Cohort // Curator has one row for both
	}
	if _, ok := CuratorWorkload(name); !ok || r.Impl == ImplCurator || !r.OK() {
		return 0, false
	}
	return rs.ratio(r, name, ImplCurator)
}

// VsZKLock is r's throughput over go-zookeeper's zk.Lock, for the
// exclusive workloads (the write lock against zk.Lock's mutex row).
func (rs Rows) VsZKLock(r Result) (float64, bool) {
	if r.Impl == ImplZKLock || !r.OK() {
		return 0, false
	}
	switch r.Workload {
	case Mutex, Uncontended, Cohort, CohortProcs:
		return rs.ratio(r, r.Workload, ImplZKLock)
	case CohortTokens:
		return rs.ratio(r, Cohort, ImplZKLock)
	case Write:
		return rs.ratio(r, Mutex, ImplZKLock)
	}
	return 0, false
}

// VsRaw is r's throughput over the raw floor at the same client count.
func (rs Rows) VsRaw(r Result) (float64, bool) {
	if r.Impl == ImplRaw || !r.OK() {
		return 0, false
	}
	return rs.ratio(r, Raw, ImplRaw)
}

func (rs Rows) ratio(r Result, workload, impl string) (float64, bool) {
	base, ok := rs.find(workload, impl, r.Clients, r.HoldMs)
	if !ok || base.OpsPerSec == 0 {
		return 0, false
	}
	return r.OpsPerSec / base.OpsPerSec, true
}

// Holders is how many cycles of r's scenario run side by side: 1 for the
// exclusive locks, every session for the read lock and the raw floor, the
// leases for the semaphores.
func (r Result) Holders() int {
	switch r.Workload {
	case Read, Raw:
		return r.Clients
	case Semaphore, SemaphoreV2:
		return max(1, min(r.Clients, r.MaxLeases))
	}
	return 1
}

// RTTsPerCycle is the time one holder's cycle takes outside the critical
// section, in round trips of rtt: Holders / throughput - hold, over rtt.
// An exclusive lock's cycle is then the hand-over (release, notification,
// the next holder's reads), an uncontended one acquire plus release.
func (r Result) RTTsPerCycle(rttMs float64) (float64, bool) {
	if !r.OK() || rttMs <= 0 || r.OpsPerSec <= 0 {
		return 0, false
	}
	cycleMs := float64(r.Holders())/r.OpsPerSec*1000 - r.HoldMs
	return cycleMs / rttMs, true
}

// Table is the rows of one round-trip time.
type Table struct {
	// RTTMs is the round trip the proxy adds (twice its one-way delay); 0
	// means the clients talk to the server directly.
	RTTMs float64 `json:"rtt_ms"`
	// MeasuredRTTMs is the median time of an exists through the same path
	// (proxy and server), taken before the runs: the round trip a
	// request really sees, server time included.
	MeasuredRTTMs float64 `json:"measured_rtt_ms"`
	// LoadAvg is the load average when the table's runs started.
	LoadAvg string `json:"load_avg,omitempty"`
	// ProxyCPU is the share of one core the proxy process used over the
	// table's runs (0 without a proxy): it runs on the same machine, where
	// every wake-up for a delayed chunk costs CPU that a real network
	// would not take from the server and the clients.
	ProxyCPU float64 `json:"proxy_cpu,omitempty"`
	Rows     Rows    `json:"rows"`
}

// Title is the table's heading: "RTT 0.5 ms (proxy 0.25 ms each way; exists
// round trip measured 0.62 ms)".
func (t Table) Title() string {
	if t.RTTMs == 0 {
		return fmt.Sprintf("RTT 0 (loopback, no proxy; exists round trip measured %.2f ms)", t.MeasuredRTTMs)
	}
	return fmt.Sprintf("RTT %s ms (proxy %s ms each way; exists round trip measured %.2f ms)",
		trimFloat(t.RTTMs), trimFloat(t.RTTMs/2), t.MeasuredRTTMs)
}

// rowLabel is the workload column: the workload with its hold and leases.
func rowLabel(r Result) string {
	name := r.Workload
	if name == Election {
		name += " fail-over" // its p50 and p99 are the fail-over's
	}
	if r.MaxLeases > 0 {
		name += fmt.Sprintf(" (%d leases)", r.MaxLeases)
	}
	if r.PerSession > 1 {
		name += fmt.Sprintf(" (x%d goroutines)", r.PerSession)
	}
	if r.HoldMs > 0 {
		name += fmt.Sprintf(", hold %s ms", trimFloat(r.HoldMs))
	}
	return name
}

// WriteTable prints t's rows as one table (Markdown-compatible) with the
// ratio, round-trip, server and client columns.
func WriteTable(w io.Writer, t Table) {
	rows := t.Rows
	head := []string{"workload", "sessions", "impl", "cycles/s", "p50 ms", "p99 ms", "vs Curator", "vs zk.Lock",
		"RTTs/cycle", "requests/acq (reads/writes)", "notifications/acq", "CPU µs/acq", "allocs/acq", "requests by type/acq"}
	const byType = 13 // the one text column after the numbers
	rounds := false
	for _, r := range rows {
		rounds = rounds || len(r.RoundsOpsPerSec) > 1
	}
	if rounds {
		head = append(head, "cycles/s of each round")
	}
	cells := [][]string{head}
	for _, r := range rows {
		row := []string{rowLabel(r), fmt.Sprint(r.Clients), r.Impl}
		if !r.OK() {
			why := r.Error
			if why == "" {
				why = "no cycle completed"
			}
			row = append(row, "FAILED: "+firstLine(why))
			for len(row) < len(head) {
				row = append(row, "")
			}
			cells = append(cells, row)
			continue
		}
		row = append(row,
			fmt.Sprintf("%.0f", r.OpsPerSec), fmt.Sprintf("%.2f", r.P50Ms), fmt.Sprintf("%.2f", r.P99Ms),
			ratioCell(rows.VsCurator(r)), ratioCell(rows.VsZKLock(r)))
		if v, ok := r.RTTsPerCycle(t.MeasuredRTTMs); ok && t.RTTMs > 0 {
			row = append(row, fmt.Sprintf("%.1f", v))
		} else {
			row = append(row, "-")
		}
		if r.Server != nil && r.WindowCycles > 0 {
			row = append(row, fmt.Sprintf("%.2f (%.2f/%.2f)", r.RequestsPerCycle, r.ReadsPerCycle, r.WritesPerCycle),
				fmt.Sprintf("%.2f", r.NotificationsPerCycle))
		} else {
			row = append(row, "-", "-")
		}
		if r.CPUPerCycleUs > 0 {
			row = append(row, fmt.Sprintf("%.0f", r.CPUPerCycleUs))
		} else {
			row = append(row, "-")
		}
		if r.AllocsPerCycle > 0 {
			row = append(row, fmt.Sprintf("%.0f", r.AllocsPerCycle))
		} else {
			row = append(row, "-")
		}
		row = append(row, orDash(OpsString(r.OpsPerCycle)))
		if rounds {
			var each []string
			for _, v := range r.RoundsOpsPerSec {
				each = append(each, fmt.Sprintf("%.0f", v))
			}
			row = append(row, strings.Join(each, " "))
		}
		cells = append(cells, row)
	}
	writeCellsAligned(w, cells, func(i int) bool { return i >= 3 && i != byType })
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func ratioCell(v float64, ok bool) string {
	if !ok {
		return "-"
	}
	return fmt.Sprintf("%.2fx", v)
}

// writeCellsAligned prints a table with "|" separators (a Markdown table);
// the columns right reports are right-aligned.
func writeCellsAligned(w io.Writer, cells [][]string, right func(int) bool) {
	widths := make([]int, len(cells[0]))
	for _, row := range cells {
		for i, c := range row {
			// A failed row's message may overflow its column.
			if strings.HasPrefix(c, "FAILED: ") {
				continue
			}
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	line := func(row []string) {
		var b strings.Builder
		for i, c := range row {
			if i > 0 {
				b.WriteString(" | ")
			}
			pad := strings.Repeat(" ", max(0, widths[i]-utf8.RuneCountInString(c)))
			if right(i) && !strings.HasPrefix(c, "FAILED") {
				b.WriteString(pad + c)
			} else {
				b.WriteString(c + pad)
			}
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
	line(cells[0])
	sep := make([]string, len(widths))
	for i, n := range widths {
		sep[i] = strings.Repeat("-", n)
	}
	fmt.Fprintln(w, strings.Join(sep, "-|-"))
	for _, row := range cells[1:] {
		line(row)
	}
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 160 {
		s = s[:160] + "..."
	}
	return s
}

// Sort orders rows as the table shows them: by workload (Names order),
// sessions and hold, then ours, raw, zk.Lock, Curator.
func (rs Rows) Sort() {
	impls := []string{ImplOurs, ImplRaw, ImplZKLock, ImplCurator}
	slices.SortStableFunc(rs, func(a, b Result) int {
		if c := cmp.Compare(slices.Index(Names, a.Workload), slices.Index(Names, b.Workload)); c != 0 {
			return c
		}
		if c := cmp.Compare(a.Clients, b.Clients); c != 0 {
			return c
		}
		if c := cmp.Compare(a.HoldMs, b.HoldMs); c != 0 {
			return c
		}
		return cmp.Compare(slices.Index(impls, a.Impl), slices.Index(impls, b.Impl))
	})
}
