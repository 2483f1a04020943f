package bench

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestParseMntr(t *testing.T) {
	text := "zk_version\t3.8.0\nzk_cnt_readlatency\t30\nzk_cnt_updatelatency\t21\nzk_packets_received\t67\n" +
		"zk_sum_node_deleted_watch_count\t7\nzk_sum_node_children_watch_count\t2\nzk_avg_latency\t1.04\n"
	c, err := parseMntr(text)
	if err != nil {
		t.Fatal(err)
	}
	want := ServerCounters{Reads: 30, Writes: 21, Notifications: 9, Packets: 67}
	if c != want {
		t.Fatalf("got %+v, want %+v", c, want)
	}
	if d := c.Sub(ServerCounters{Reads: 10, Writes: 1, Notifications: 4, Packets: 7}); d.Requests() != 40 || d.Notifications != 5 {
		t.Fatalf("Sub: %+v", d)
	}
	if _, err := parseMntr("zk_version\t3.4.14\n"); err == nil {
		t.Fatal("a server without the counters: want an error")
	}
}

func TestCountTrace(t *testing.T) {
	log := `02:50:11.949 [NIOWorkerThread-3] INFO org.apache.zookeeper.server.ZooTrace - Set text trace mask to 0x2
02:50:11.951 [ProcessThread(sid:0 cport:37863):] TRACE org.apache.zookeeper.server.PrepRequestProcessor - :Psessionid:0x100002403270000 type:create cxid:0x6 zxid:0xfffffffffffffffe txntype:unknown reqpath:/x
02:50:11.952 [ProcessThread(sid:0 cport:37863):] DEBUG org.apache.zookeeper.server.PrepRequestProcessor - Processing ACL: 31,s{'world,'anyone}
02:50:11.954 [ProcessThread(sid:0 cport:37863):] TRACE org.apache.zookeeper.server.PrepRequestProcessor - :Psessionid:0x100002403270000 type:getChildren2 cxid:0x7 zxid:0xfffffffffffffffe txntype:unknown reqpath:/
02:50:11.958 [ProcessThread(sid:0 cport:37863):] TRACE org.apache.zookeeper.server.PrepRequestProcessor - :Psessionid:0x100002403270000 type:delete cxid:0xa zxid:0xfffffffffffffffe txntype:unknown reqpath:/x0000000001
02:50:11.958 [ProcessThread(sid:0 cport:37863):] TRACE org.apache.zookeeper.server.PrepRequestProcessor - :Psessionid:0x100002403270001 type:create cxid:0xb zxid:0xfffffffffffffffe txntype:unknown reqpath:/x
02:50:11.961 [NIOWorkerThread-2] INFO org.apache.zookeeper.server.ZooTrace - Set text trace mask to 0x0
02:50:11.962 [ProcessThread(sid:0 cport:37863):] TRACE org.apache.zookeeper.server.PrepRequestProcessor - :Psessionid:0x100002403270000 type:exists cxid:0xc zxid:0xfffffffffffffffe txntype:unknown reqpath:/x
`
	path := filepath.Join(t.TempDir(), "server.log")
	if err := os.WriteFile(path, []byte("before\n"+log), 0o644); err != nil {
		t.Fatal(err)
	}
	counts, found, err := countTrace(path, int64(len("before\n")))
	if err != nil || !found {
		t.Fatalf("countTrace: %v, marker found %v", err, found)
	}
	want := map[string]int64{"create": 2, "getChildren2": 1, "delete": 1}
	if len(counts) != len(want) {
		t.Fatalf("got %v, want %v", counts, want)
	}
	for k, v := range want {
		if counts[k] != v {
			t.Fatalf("got %v, want %v", counts, want)
		}
	}
	if got := OpsString(map[string]float64{"create": 1, "getChildren2": 1.004, "exists": 0.25, "ping": 0.001}); got != "getChildren2 1, create 1, exists 0.25" {
		t.Fatalf("OpsString = %q", got)
	}
}

// fakeDriver records phase switches and answers with fixed points.
type fakeDriver struct {
	phases []int32
	cycles map[int32]int64 // cycles reported when switching to a phase
	cpu    time.Duration
}

func (d *fakeDriver) switchTo(phase int32) (point, error) {
	d.phases = append(d.phases, phase)
	d.cpu += 10 * time.Millisecond
	return point{at: time.Now(), cycles: d.cycles[phase], cpu: d.cpu, mallocs: uint64(100 * len(d.phases)), hasMallocs: true}, nil
}

func (d *fakeDriver) failed() <-chan struct{} { return nil }

func TestDrive(t *testing.T) {
	d := &fakeDriver{cycles: map[int32]int64{phaseStop: 50}}
	w, err := drive(context.Background(), Config{Measure: 20 * time.Millisecond}, d)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.phases) != 2 || d.phases[0] != phaseMeasure || d.phases[1] != phaseStop {
		t.Fatalf("phases %v, want measure then stop", d.phases)
	}
	if w.cycles != 50 || w.cpu != 10*time.Millisecond || !w.hasMallocs || w.mallocs != 100 || w.period < 20*time.Millisecond || w.server != nil {
		t.Fatalf("window %+v", w)
	}
	var r Result
	applyWindow(&r, w)
	if r.CPUPerCycleUs != 200 || r.AllocsPerCycle != max(0, 2-HarnessAllocs()) || r.RequestsPerCycle != 0 {
		t.Fatalf("per cycle: %+v", r)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := drive(ctx, Config{Measure: time.Hour}, &fakeDriver{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
}

func TestHarnessAllocs(t *testing.T) {
	// The deadline context and its timer: a handful, never zero, never
	// dozens.
	if a := HarnessAllocs(); a < 1 || a > 10 {
		t.Fatalf("the loop allocates %v times per cycle", a)
	}
	t.Logf("the loop allocates %.1f times per cycle", HarnessAllocs())
}
