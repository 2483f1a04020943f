package chaos

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// processes keeps one consumer process (qconsume) of workload's queue
// running until ctx ends: each lives 2-6 s and is then killed with
// SIGKILL, so that it dies holding an item's lock about as often as not
// (its lock node stays until its session expires, and the item goes to
// another consumer then). When ctx ends the last one is stopped with
// SIGTERM (it closes its session, leaving no lock), SIGKILL after 5 s.
func (r *queueRunner) processes(ctx context.Context, wl string, rng *rand.Rand) {
	for n := 0; ctx.Err() == nil; n++ {
		name := fmt.Sprintf("p%d", n)
		out, err := os.Create(filepath.Join(r.dir, fmt.Sprintf("qconsume-%s-%d.out", wl, n)))
		if err != nil {
			r.logf("queue process %s %s: %v", wl, name, err)
			return
		}
		cmd := exec.Command(r.bin, "-zk", r.servers, "-workload", wl, "-name", name, "-session-timeout", r.st.String())
		cmd.Stdout, cmd.Stderr = out, out
		err = cmd.Start()
		out.Close()
		if err != nil {
			r.logf("queue process %s %s: %v", wl, name, err)
			return
		}
		r.count(r.stats.Starts, wl)
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		life := 2*time.Second + time.Duration(rng.Int63n(int64(4*time.Second)))
		t := time.NewTimer(life)
		select {
		case <-t.C:
			_ = cmd.Process.Signal(syscall.SIGKILL)
			<-exited
			r.count(r.stats.Kills, wl)
		case err := <-exited:
			r.count(r.stats.Exits, wl)
			r.logf("queue process %s %s exited by itself: %v (see %s)", wl, name, err, r.dir)
			sleep(ctx, 500*time.Millisecond)
		case <-ctx.Done():
			_ = cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-exited:
			case <-time.After(5 * time.Second):
				_ = cmd.Process.Signal(syscall.SIGKILL)
				<-exited
			}
		}
		t.Stop()
	}
}

// count adds one to m[wl] under the runner's lock.
func (r *queueRunner) count(m map[string]int, wl string) {
	r.mu.Lock()
	m[wl]++
	r.mu.Unlock()
}
