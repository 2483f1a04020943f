package javabench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gocurator/curator/internal/curatorjava"
)

// Watch subscriber modes of WatchBench.java.
const (
	// WatchPersistent is watchers().add() with AddWatchMode.PERSISTENT.
	WatchPersistent = "persistent"
	// WatchRecursive is watchers().add() with PERSISTENT_RECURSIVE.
	WatchRecursive = "recursive"
	// WatchTreeCache is a TreeCache (one-shot watches on every node).
	WatchTreeCache = "treecache"
	// WatchCuratorCache is a CuratorCache (one persistent recursive
	// watch, data kept).
	WatchCuratorCache = "curatorcache"
	// WatchLoad measures a CuratorCache's initial load (see Load).
	WatchLoad = "load"
)

// WatchConfig configures one WatchBench.java subscriber.
type WatchConfig struct {
	// ConnectString is the ZooKeeper connect string.
	ConnectString string
	// Path is the watched node or subtree root.
	Path string
	// Mode is WatchPersistent, WatchRecursive, WatchTreeCache or
	// WatchCuratorCache.
	Mode string
	// Stderr receives the JVM's stderr if non-nil; otherwise its tail is
	// included in errors.
	Stderr io.Writer
	// HeapMB is the JVM's maximum heap (-Xmx) in MiB; 0: 512, as the lock
	// benchmark's.
	HeapMB int
}

// Watcher is a running WatchBench.java: one Curator client subscribed to
// a path. Its methods must be called from one goroutine.
type Watcher struct {
	cfg     WatchConfig
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	stderr  *curatorjava.TailBuffer
	lines   chan string
	session int64
	loaded  string // the LOADED line of a WatchLoad run
	once    sync.Once
	cancel  context.CancelFunc
}

// StartWatch starts WatchBench.java and returns once its watch is set (a
// cache's: once it is initialized). Cancelling ctx kills the JVM. Errors
// wrap curatorjava.ErrNotInstalled when Java or the Curator jars are
// missing.
func StartWatch(ctx context.Context, cfg WatchConfig) (*Watcher, error) {
	switch cfg.Mode {
	case WatchPersistent, WatchRecursive, WatchTreeCache, WatchCuratorCache, WatchLoad:
	default:
		return nil, fmt.Errorf("javabench: unknown watch mode %q", cfg.Mode)
	}
	if cfg.ConnectString == "" || cfg.Path == "" {
		return nil, errors.New("javabench: WatchConfig needs ConnectString and Path")
	}
	ctx, cancel := context.WithCancel(ctx)
	jvm := benchJVMOptions
	if cfg.HeapMB > 0 {
		jvm = append(slices.DeleteFunc(slices.Clone(jvm), func(o string) bool { return strings.HasPrefix(o, "-Xmx") }),
			fmt.Sprintf("-Xmx%dm", cfg.HeapMB))
	}
	cmd, err := curatorjava.Command(ctx, sources, "javabench.WatchBench", jvm, cfg.ConnectString, cfg.Path, cfg.Mode)
	if err != nil {
		cancel()
		return nil, err
	}
	cmd.WaitDelay = 5 * time.Second
	w := &Watcher{cfg: cfg, cmd: cmd, stderr: curatorjava.NewTailBuffer(64 << 10), lines: make(chan string, 1024), cancel: cancel}
	if cfg.Stderr != nil {
		cmd.Stderr = cfg.Stderr
	} else {
		cmd.Stderr = w.stderr
	}
	if w.stdin, err = cmd.StdinPipe(); err != nil {
		cancel()
		return nil, fmt.Errorf("javabench: %w", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		cancel()
		return nil, fmt.Errorf("javabench: %w", err)
	}
	if err := cmd.Start(); err != nil {
		cancel()
		return nil, fmt.Errorf("javabench: start %s: %w", cmd.Path, err)
	}
	go func() {
		defer close(w.lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			w.lines <- sc.Text()
		}
	}()
	ready := readyTimeout
	if cfg.Mode == WatchLoad {
		ready = 30 * time.Minute
	}
	var line string
	if cfg.Mode == WatchLoad {
		w.loaded, err = w.await(ctx, "LOADED ", ready)
	}
	if err == nil {
		line, err = w.await(ctx, "READY ", readyTimeout)
	}
	if err == nil {
		w.session, err = parseSession(strings.TrimPrefix(line, "READY "))
	}
	if err != nil {
		w.Close()
		return nil, err
	}
	return w, nil
}

func parseSession(hex string) (int64, error) {
	u, err := strconv.ParseUint(strings.TrimSpace(hex), 16, 64)
	return int64(u), err
}

// Load returns what a WatchLoad run measured: the time of a CuratorCache's
// initial load, the heap it retains and its size.
func (w *Watcher) Load() (d time.Duration, heap int64, nodes int, err error) {
	line := w.loaded
	f := strings.Fields(line)
	if len(f) != 4 {
		return 0, 0, 0, w.exitError(fmt.Errorf("load answered %q", line))
	}
	ns, e1 := strconv.ParseInt(f[1], 10, 64)
	heap, e2 := strconv.ParseInt(f[2], 10, 64)
	n, e3 := strconv.Atoi(f[3])
	if err := errors.Join(e1, e2, e3); err != nil {
		return 0, 0, 0, w.exitError(fmt.Errorf("load answered %q: %w", line, err))
	}
	return time.Duration(ns), heap, n, nil
}

// SessionID is the subscriber's ZooKeeper session.
func (w *Watcher) SessionID() int64 { return w.session }

// Latency switches the subscriber to reporting every data change; Next
// returns their arrival times.
func (w *Watcher) Latency() error { return w.send("lat") }

// Next returns the arrival time of the next data change, as seen in the
// subscriber's callback, in Unix nanoseconds.
func (w *Watcher) Next(ctx context.Context, timeout time.Duration) (int64, error) {
	line, err := w.await(ctx, "E ", timeout)
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(strings.TrimPrefix(line, "E "), 10, 64)
}

// Burst switches the subscriber to counting data changes until the end
// marker; BurstResult returns what it counted.
func (w *Watcher) Burst() error { return w.send("burst") }

// BurstResult waits for the end marker and returns the arrival of the
// first data change and of the marker (Unix nanoseconds) and the data
// changes delivered in between.
func (w *Watcher) BurstResult(ctx context.Context, timeout time.Duration) (first, end, n int64, err error) {
	line, err := w.await(ctx, "B ", timeout)
	if err != nil {
		return 0, 0, 0, err
	}
	f := strings.Fields(line)
	if len(f) != 4 {
		return 0, 0, 0, w.exitError(fmt.Errorf("burst answered %q", line))
	}
	first, e1 := strconv.ParseInt(f[1], 10, 64)
	end, e2 := strconv.ParseInt(f[2], 10, 64)
	n, e3 := strconv.ParseInt(f[3], 10, 64)
	if err := errors.Join(e1, e2, e3); err != nil {
		return 0, 0, 0, w.exitError(fmt.Errorf("burst answered %q: %w", line, err))
	}
	return first, end, n, nil
}

func (w *Watcher) send(cmd string) error {
	if _, err := io.WriteString(w.stdin, cmd+"\n"); err != nil {
		return w.exitError(fmt.Errorf("%s: %w", cmd, err))
	}
	return nil
}

// await returns the next line that starts with prefix, skipping others.
func (w *Watcher) await(ctx context.Context, prefix string, timeout time.Duration) (string, error) {
	t := time.NewTimer(timeout)
	defer t.Stop()
	for {
		select {
		case line, ok := <-w.lines:
			if !ok {
				return "", w.exitError(fmt.Errorf("exited before %q", prefix))
			}
			if strings.HasPrefix(line, prefix) {
				return line, nil
			}
		case <-t.C:
			return "", w.exitError(fmt.Errorf("no %q within %v", strings.TrimSpace(prefix), timeout))
		case <-ctx.Done():
			return "", w.exitError(ctx.Err())
		}
	}
}

// Log is the tail of what the JVM wrote to its stderr (Curator's and
// ZooKeeper's log) so far: empty when WatchConfig.Stderr took it.
func (w *Watcher) Log() string { return w.stderr.String() }

func (w *Watcher) exitError(err error) error {
	return fmt.Errorf("javabench: watch %s: %w\nstderr:\n%s", w.cfg.Mode, err, w.stderr.String())
}

// Close stops the subscriber (removing its watch, closing its client)
// and waits for the JVM to exit.
func (w *Watcher) Close() {
	w.once.Do(func() {
		_, _ = io.WriteString(w.stdin, "stop\n")
		_ = w.stdin.Close()
		done := make(chan struct{})
		go func() {
			for range w.lines {
			}
			close(done)
		}()
		select {
		case <-done:
		case <-time.After(phaseTimeout):
		}
		w.cancel()
		_ = w.cmd.Wait()
	})
}
