package bench

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
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
		{"default", "", Names, false},
		{"none", "none", nil, false},
		{"table order, duplicates dropped", "write, mutex,write", []string{Mutex, Write}, false},
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

func TestRatios(t *testing.T) {
	rows := Rows{
		{Workload: Raw, Impl: ImplRaw, Clients: 8, Ops: 1, OpsPerSec: 1000},
		{Workload: Mutex, Impl: ImplOurs, Clients: 8, Ops: 1, OpsPerSec: 400, P99Ms: 4},
		{Workload: Mutex, Impl: ImplZKLock, Clients: 8, Ops: 1, OpsPerSec: 200},
		{Workload: Mutex, Impl: ImplCurator, Clients: 8, Ops: 1, OpsPerSec: 100, P99Ms: 10},
		{Workload: Write, Impl: ImplOurs, Clients: 8, Ops: 1, OpsPerSec: 300},
		{Workload: Semaphore, Impl: ImplOurs, Clients: 8, Ops: 1, OpsPerSec: 500},
		{Workload: SemaphoreV2, Impl: ImplCurator, Clients: 8, Ops: 1, OpsPerSec: 100},
		{Workload: Uncontended, Impl: ImplOurs, Clients: 1, Ops: 1, OpsPerSec: 96},
		{Workload: Uncontended, Impl: ImplRaw, Clients: 1, Ops: 1, OpsPerSec: 100},
	}
	tests := []struct {
		name string
		f    func(Result) (float64, bool)
		row  int
		want float64
		ok   bool
	}{
		{"mutex vs Curator", rows.VsCurator, 1, 4, true},
		{"mutex vs zk.Lock", rows.VsZKLock, 1, 2, true},
		{"write vs zk.Lock's mutex row", rows.VsZKLock, 4, 1.5, true},
		{"mutex vs raw", rows.VsRaw, 1, 0.4, true},
		{"semaphore V1 vs Curator V2", rows.VsCurator, 5, 5, true},
		{"uncontended vs uncontended raw", rows.VsRaw, 7, 0.96, true},
		{"Curator has no Curator ratio", rows.VsCurator, 3, 0, false},
		{"write has no Curator row", rows.VsCurator, 4, 0, false},
		{"semaphore has no zk.Lock ratio", rows.VsZKLock, 5, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := tt.f(rows[tt.row])
			if ok != tt.ok || got != tt.want {
				t.Fatalf("got %v, %v; want %v, %v", got, ok, tt.want, tt.ok)
			}
		})
	}
	un := &UncontendedResult{Ratio: 0.96}
	status := map[string]string{}
	for _, tg := range Targets(rows, 8, un) {
		status[tg.Goal] = tg.Status
	}
	for goal, want := range map[string]string{
		"mutex throughput >= 2x Curator InterProcessMutex":            "MET",
		"mutex throughput >= 1.5x go-zookeeper zk.Lock":               "MET",
		"mutex p99 <= 1/2 of Curator's p99":                           "MET",
		"uncontended mutex within 5% of raw create+list+delete":       "MET",
		"read lock >= 90% of raw floor":                               "n/a",
		"semaphore (loop mode) >= 4x Curator InterProcessSemaphoreV2": "MET",
		"semaphore V2 mode >= 1.5x Curator InterProcessSemaphoreV2":   "n/a",
	} {
		if status[goal] != want {
			t.Errorf("%s: %s, want %s", goal, status[goal], want)
		}
	}
	var b bytes.Buffer
	WriteTable(&b, rows)
	if !strings.Contains(b.String(), " 4.00x |") {
		t.Errorf("table lacks the mutex ratio:\n%s", b.String())
	}
}

func TestNiceScale(t *testing.T) {
	tests := []struct {
		v         float64
		top, step float64
	}{
		{0, 1, 0.2},
		{2345, 2500, 500},
		{999, 1000, 200},
		{10, 10, 2},
	}
	for _, tt := range tests {
		top, step := niceScale(tt.v, 5)
		if top != tt.top || step != tt.step {
			t.Errorf("niceScale(%v) = %v, %v; want %v, %v", tt.v, top, step, tt.top, tt.step)
		}
	}
}

func TestWriteSVGIsWellFormed(t *testing.T) {
	rows := Rows{
		{Workload: Mutex, Impl: ImplOurs, Clients: 2, Ops: 1, OpsPerSec: 200},
		{Workload: Mutex, Impl: ImplOurs, Clients: 1, Ops: 1, OpsPerSec: 100},
		{Workload: Mutex, Impl: "a <b> & c", Clients: 1, Ops: 1, OpsPerSec: 50},
	}
	series := SeriesByImpl(rows, Mutex)
	if len(series) != 2 || series[0].Points[0][0] != 1 {
		t.Fatalf("series %+v: want 2, points sorted by clients", series)
	}
	var b bytes.Buffer
	if err := WriteSVG(&b, "t", "x", "y", series); err != nil {
		t.Fatal(err)
	}
	d := xml.NewDecoder(&b)
	for {
		_, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v", err)
		}
	}
	if err := WriteSVG(&b, "t", "x", "y", nil); err == nil {
		t.Fatal("no data: want an error")
	}
}
