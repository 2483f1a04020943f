package bench

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
)

// Rows is a set of results with the lookups the ratio columns need.
type Rows []Result

// find returns the row of workload and impl at clients.
func (rs Rows) find(workload, impl string, clients int) (Result, bool) {
	for _, r := range rs {
		if r.Workload == workload && r.Impl == impl && r.Clients == clients && r.OK() {
			return r, true
		}
	}
	return Result{}, false
}

// VsCurator is r's throughput over Curator's for the same workload (both
// semaphore modes against InterProcessSemaphoreV2).
func (rs Rows) VsCurator(r Result) (float64, bool) {
	jw, ok := CuratorWorkload(r.Workload)
	if !ok || r.Impl == ImplCurator || !r.OK() {
		return 0, false
	}
	return rs.ratio(r, CuratorRow(jw), ImplCurator)
}

// VsZKLock is r's throughput over go-zookeeper's zk.Lock, for the
// exclusive workloads (mutex and write lock).
func (rs Rows) VsZKLock(r Result) (float64, bool) {
	if (r.Workload != Mutex && r.Workload != Write) || r.Impl == ImplZKLock || !r.OK() {
		return 0, false
	}
	return rs.ratio(r, Mutex, ImplZKLock)
}

// VsRaw is r's throughput over the raw floor at the same client count.
func (rs Rows) VsRaw(r Result) (float64, bool) {
	if r.Impl == ImplRaw || !r.OK() {
		return 0, false
	}
	if r.Workload == Uncontended {
		return rs.ratio(r, Uncontended, ImplRaw)
	}
	return rs.ratio(r, Raw, ImplRaw)
}

func (rs Rows) ratio(r Result, workload, impl string) (float64, bool) {
	base, ok := rs.find(workload, impl, r.Clients)
	if !ok || base.OpsPerSec == 0 {
		return 0, false
	}
	return r.OpsPerSec / base.OpsPerSec, true
}

// WriteTable prints rows as one aligned table with the ratio columns.
func WriteTable(w io.Writer, rows Rows) {
	head := []string{"workload", "impl", "clients", "ops/s", "p50 ms", "p99 ms", "vs Curator", "vs zk.Lock", "vs raw floor"}
	rounds := false
	for _, r := range rows {
		rounds = rounds || len(r.RoundsOpsPerSec) > 1
	}
	if rounds {
		head = append(head, "ops/s of each round")
	}
	cells := [][]string{head}
	for _, r := range rows {
		name := r.Workload
		if r.MaxLeases > 0 {
			name += fmt.Sprintf(" (max %d)", r.MaxLeases)
		}
		if !r.OK() {
			why := r.Error
			if why == "" {
				why = "no cycle completed"
			}
			row := []string{name, r.Impl, fmt.Sprint(r.Clients), "FAILED: " + firstLine(why), "", "", "", "", ""}
			if rounds {
				row = append(row, "")
			}
			cells = append(cells, row)
			continue
		}
		row := []string{
			name, r.Impl, fmt.Sprint(r.Clients),
			fmt.Sprintf("%.0f", r.OpsPerSec), fmt.Sprintf("%.2f", r.P50Ms), fmt.Sprintf("%.2f", r.P99Ms),
			ratioCell(rows.VsCurator(r)), ratioCell(rows.VsZKLock(r)), ratioCell(rows.VsRaw(r)),
		}
		if rounds {
			var each []string
			for _, v := range r.RoundsOpsPerSec {
				each = append(each, fmt.Sprintf("%.0f", v))
			}
			row = append(row, strings.Join(each, " "))
		}
		cells = append(cells, row)
	}
	writeCells(w, cells, 2)
}

func ratioCell(v float64, ok bool) string {
	if !ok {
		return "-"
	}
	return fmt.Sprintf("%.2fx", v)
}

// writeCells prints a table with "|" separators; columns from numFrom on
// are right-aligned.
func writeCells(w io.Writer, cells [][]string, numFrom int) {
	widths := make([]int, len(cells[0]))
	for _, row := range cells {
		for i, c := range row {
			// A failed row's message may overflow its column.
			if strings.HasPrefix(c, "FAILED: ") {
				continue
			}
			widths[i] = max(widths[i], len(c))
		}
	}
	line := func(row []string) {
		var b strings.Builder
		for i, c := range row {
			if i > 0 {
				b.WriteString(" | ")
			}
			pad := strings.Repeat(" ", max(0, widths[i]-len(c)))
			if i >= numFrom && !strings.HasPrefix(c, "FAILED") {
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

// Sort orders rows as the table shows them: by workload (Names, then the
// uncontended pair), then ours, raw, zk.Lock, Curator, then client count.
func (rs Rows) Sort() {
	order := append(append([]string{}, Names...), Uncontended)
	impls := []string{ImplOurs, ImplRaw, ImplZKLock, ImplCurator, ImplSketch}
	slices.SortStableFunc(rs, func(a, b Result) int {
		if c := cmp.Compare(slices.Index(order, a.Workload), slices.Index(order, b.Workload)); c != 0 {
			return c
		}
		if c := cmp.Compare(slices.Index(impls, a.Impl), slices.Index(impls, b.Impl)); c != 0 {
			return c
		}
		return cmp.Compare(a.Clients, b.Clients)
	})
}

// WriteSteps prints 1-client rows as steps from the first: cycle time and
// what each step adds to the one before.
func WriteSteps(w io.Writer, rows Rows) {
	cells := [][]string{{"step", "cycles/s", "cycle us", "+us vs previous", "p50 acquire ms", "vs first"}}
	prev := 0.0
	for i, r := range rows {
		if !r.OK() {
			cells = append(cells, []string{r.Impl, "FAILED: " + firstLine(r.Error), "", "", "", ""})
			continue
		}
		us := 1e6 / r.OpsPerSec
		add := "-"
		if i > 0 && prev > 0 {
			add = fmt.Sprintf("%+.0f", us-prev)
		}
		prev = us
		cells = append(cells, []string{r.Impl, fmt.Sprintf("%.0f", r.OpsPerSec), fmt.Sprintf("%.0f", us), add,
			fmt.Sprintf("%.3f", r.P50Ms), fmt.Sprintf("%.3f", r.OpsPerSec/rows[0].OpsPerSec)})
	}
	writeCells(w, cells, 1)
}
