package bench

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"math"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestPercentile(t *testing.T) {
	ms := func(v ...int) []time.Duration {
		out := make([]time.Duration, len(v))
		for i, x := range v {
			out[i] = time.Duration(x) * time.Millisecond
		}
		return out
	}
	tests := []struct {
		name string
		in   []time.Duration
		q    float64
		want time.Duration
	}{
		{"empty", nil, 0.5, 0},
		{"one", ms(7), 0.99, 7 * time.Millisecond},
		{"p50 of 4 is the 2nd (nearest rank)", ms(1, 2, 3, 4), 0.5, 2 * time.Millisecond},
		{"p99 of 100 is the 99th", ms(seq(100)...), 0.99, 99 * time.Millisecond},
		{"p100 is the max", ms(1, 2, 3), 1, 3 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := percentile(tt.in, tt.q); got != tt.want {
				t.Fatalf("percentile(%v) = %v, want %v", tt.q, got, tt.want)
			}
		})
	}
}

func seq(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i + 1
	}
	return out
}

func TestSummarize(t *testing.T) {
	lat := []time.Duration{3 * time.Millisecond, time.Millisecond, 2 * time.Millisecond, 4 * time.Millisecond}
	r := summarize(Result{}, lat, 2*time.Second)
	if r.Ops != 4 || r.OpsPerSec != 2 || r.P50Ms != 2 || r.P99Ms != 4 || r.MaxMs != 4 || r.MeanMs != 2.5 {
		t.Fatalf("summarize = %+v", r)
	}
}

func TestMedian(t *testing.T) {
	row := func(impl string, ops float64) Result {
		return Result{Workload: Mutex, Impl: impl, Clients: 8, Ops: 1, OpsPerSec: ops}
	}
	failed := Result{Workload: Mutex, Impl: ImplCurator, Clients: 8, Error: "boom"}
	got := Median([]Result{row(ImplOurs, 300), row(ImplZKLock, 5), row(ImplOurs, 100), failed, row(ImplOurs, 200)})
	tests := []struct {
		name   string
		impl   string
		want   float64
		rounds []float64
	}{
		{"median of three", ImplOurs, 200, []float64{300, 100, 200}},
		{"single round keeps no list", ImplZKLock, 5, nil},
		{"all failed keeps the failure", ImplCurator, 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			i := slices.IndexFunc(got, func(r Result) bool { return r.Impl == tt.impl })
			if i < 0 {
				t.Fatalf("no row for %s in %+v", tt.impl, got)
			}
			if got[i].OpsPerSec != tt.want || !slices.Equal(got[i].RoundsOpsPerSec, tt.rounds) {
				t.Fatalf("row %+v, want ops %v rounds %v", got[i], tt.want, tt.rounds)
			}
		})
	}
	if len(got) != 3 {
		t.Fatalf("%d rows, want 3", len(got))
	}
}

func TestParseNames(t *testing.T) {
	tests := []struct {
		name    string
		list    string
		want    []string
		wantErr bool
	}{
		{"all", "all", Names, false},
		{"default is the headline", "", Headline, false},
		{"headline", "headline", Headline, false},
		{"none", "none", nil, false},
		{"table order, duplicates dropped", "write, mutex,write,uncontended", []string{Mutex, Uncontended, Write}, false},
		{"unknown", "mutex,spinlock", nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, unavailable, err := ParseNames(tt.list)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v", err)
			}
			if len(unavailable) != 0 {
				t.Fatalf("unavailable %v: every recipe is built in", unavailable)
			}
			if !tt.wantErr && !slices.Equal(got, tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestRatiosAndRoundTrips(t *testing.T) {
	rows := Rows{
		{Workload: Mutex, Impl: ImplOurs, Clients: 8, Ops: 1, OpsPerSec: 400, P99Ms: 4},
		{Workload: Mutex, Impl: ImplZKLock, Clients: 8, Ops: 1, OpsPerSec: 200},
		{Workload: Mutex, Impl: ImplCurator, Clients: 8, Ops: 1, OpsPerSec: 100, P99Ms: 10},
		{Workload: Mutex, Impl: ImplOurs, Clients: 8, HoldMs: 5, Ops: 1, OpsPerSec: 150},
		{Workload: Mutex, Impl: ImplCurator, Clients: 8, HoldMs: 5, Ops: 1, OpsPerSec: 100},
		{Workload: Write, Impl: ImplOurs, Clients: 8, Ops: 1, OpsPerSec: 300},
		{Workload: Semaphore, Impl: ImplOurs, Clients: 8, MaxLeases: 8, Ops: 1, OpsPerSec: 500},
		{Workload: Semaphore, Impl: ImplCurator, Clients: 8, MaxLeases: 8, Ops: 1, OpsPerSec: 100},
		{Workload: Read, Impl: ImplOurs, Clients: 8, Ops: 1, OpsPerSec: 1600},
		{Workload: Uncontended, Impl: ImplOurs, Clients: 1, Ops: 1, OpsPerSec: 250},
		{Workload: Uncontended, Impl: ImplZKLock, Clients: 1, Ops: 1, OpsPerSec: 125},
	}
	tests := []struct {
		name string
		f    func(Result) (float64, bool)
		row  int
		want float64
		ok   bool
	}{
		{"mutex vs Curator", rows.VsCurator, 0, 4, true},
		{"mutex vs zk.Lock", rows.VsZKLock, 0, 2, true},
		{"hold is its own scenario", rows.VsCurator, 3, 1.5, true},
		{"write vs zk.Lock's mutex row", rows.VsZKLock, 5, 1.5, true},
		{"semaphore vs Curator's semaphore row", rows.VsCurator, 6, 5, true},
		{"uncontended vs uncontended zk.Lock", rows.VsZKLock, 9, 2, true},
		{"Curator has no Curator ratio", rows.VsCurator, 2, 0, false},
		{"write has no Curator row", rows.VsCurator, 5, 0, false},
		{"semaphore has no zk.Lock ratio", rows.VsZKLock, 6, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := tt.f(rows[tt.row])
			if ok != tt.ok || got != tt.want {
				t.Fatalf("got %v, %v; want %v, %v", got, ok, tt.want, tt.ok)
			}
		})
	}

	rtt := []struct {
		name string
		row  int
		want float64
	}{
		{"exclusive: one cycle at a time (2.5 ms at 400/s)", 0, 2.5},
		{"the hold is not a round trip (1000/150 - 5 ms)", 3, (1000.0/150 - 5) / 1},
		{"read: every session at once (8 / 1600/s = 5 ms)", 8, 5},
		{"semaphore: as many as leases (8 / 500/s = 16 ms)", 6, 16},
		{"uncontended: 4 ms", 9, 4},
	}
	for _, tt := range rtt {
		t.Run("round trips: "+tt.name, func(t *testing.T) {
			got, ok := rows[tt.row].RTTsPerCycle(1)
			if !ok || math.Abs(got-tt.want) > 1e-9 {
				t.Fatalf("RTTsPerCycle(1 ms) = %v, %v; want %v", got, ok, tt.want)
			}
		})
	}
	if _, ok := rows[0].RTTsPerCycle(0); ok {
		t.Fatal("round trips of a zero RTT")
	}

	var b bytes.Buffer
	WriteTable(&b, Table{RTTMs: 1, MeasuredRTTMs: 1, Rows: rows})
	if !strings.Contains(b.String(), " 4.00x |") {
		t.Errorf("table lacks the mutex ratio:\n%s", b.String())
	}
}

func TestSeriesAndChart(t *testing.T) {
	tables := []Table{
		{RTTMs: 2, Rows: Rows{
			{Workload: Mutex, Impl: ImplOurs, Clients: 8, Ops: 1, OpsPerSec: 200},
			{Workload: Mutex, Impl: ImplCurator, Clients: 8, Ops: 1, OpsPerSec: 100},
			{Workload: Mutex, Impl: ImplOurs, Clients: 64, Ops: 1, OpsPerSec: 1},
		}},
		{RTTMs: 0, Rows: Rows{
			{Workload: Mutex, Impl: ImplOurs, Clients: 8, Ops: 1, OpsPerSec: 2000},
			{Workload: Mutex, Impl: ImplCurator, Clients: 8, Ops: 1, OpsPerSec: 1900},
			{Workload: Mutex, Impl: "a <b> & c", Clients: 8, Ops: 1, OpsPerSec: 50},
		}},
	}
	series := SeriesByRTT(tables, Mutex, 8, 0)
	if len(series) != 3 || series[0].Name != ImplOurs || !slices.Equal(series[0].Points, [][2]float64{{0, 2000}, {2, 200}}) {
		t.Fatalf("series %+v: want 3, points sorted by RTT", series)
	}
	c := Chart{Title: "t", XLabel: "x", YLabel: "y", Series: series, XTicks: []float64{0, 2}}
	var b bytes.Buffer
	if err := c.Draw(&b, "svg"); err != nil {
		t.Fatal(err)
	}
	d := xml.NewDecoder(&b)
	for {
		_, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed SVG: %v", err)
		}
	}
	b.Reset()
	if err := c.Draw(&b, "png"); err != nil || !bytes.HasPrefix(b.Bytes(), []byte("\x89PNG")) {
		t.Fatalf("png: %v, starts %q", err, b.Bytes()[:min(8, b.Len())])
	}
	if err := (Chart{}).Draw(&b, "svg"); err == nil {
		t.Fatal("no data: want an error")
	}
	for path, ok := range map[string]bool{"a.svg": true, "b.PNG": true, "c.txt": false, "d": false} {
		if _, err := ChartFormat(path); (err == nil) != ok {
			t.Errorf("ChartFormat(%q): %v", path, err)
		}
	}
	if got := SeriesByImpl(tables[0].Rows, Mutex); len(got) != 2 || len(got[0].Points) != 2 {
		t.Fatalf("by clients: %+v", got)
	}
}
