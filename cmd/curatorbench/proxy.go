package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/gocurator/curator/zktest"
)

// proxyEnv, when set in the environment to "target oneWayDelay", makes the
// command serve a delaying zktest.Proxy instead of benchmarking: the
// benchmark runs its proxy in a child process of its own, so that the
// proxy's CPU time is not counted as the Go clients' and its goroutines do
// not share their scheduler.
const proxyEnv = "CURATORBENCH_PROXY"

// serveProxyIfAsked serves the proxy proxyEnv asks for, if it is set, and
// reports whether it did. The proxy's address is the first line on stdout;
// it runs until stdin closes.
func serveProxyIfAsked() bool {
	spec := os.Getenv(proxyEnv)
	if spec == "" {
		return false
	}
	if err := serveProxy(spec, os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "curatorbench proxy:", err)
		os.Exit(1)
	}
	return true
}

func serveProxy(spec string, stdin io.Reader, stdout io.Writer) error {
	target, delay, ok := strings.Cut(spec, " ")
	if !ok {
		return fmt.Errorf("%s=%q: want \"target delay\"", proxyEnv, spec)
	}
	d, err := time.ParseDuration(delay)
	if err != nil {
		return fmt.Errorf("%s: %w", proxyEnv, err)
	}
	p, err := zktest.ListenProxy(target)
	if err != nil {
		return err
	}
	defer p.Close()
	p.SetDelay(d)
	if _, err := fmt.Fprintln(stdout, p.Addr()); err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, stdin)
	return nil
}

// proxyProc is a proxy served by a child process.
type proxyProc struct {
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	addr    string
	done    chan error
	started time.Time

	once  sync.Once
	share float64 // Close's result
}

// startProxy starts a child process serving a proxy to target with a
// one-way delay.
func startProxy(target string, oneWay time.Duration) (*proxyProc, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("proxy: %w", err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s %s", proxyEnv, target, oneWay))
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = childProcAttr()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("proxy: %w", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("proxy: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("proxy: %w", err)
	}
	p := &proxyProc{cmd: cmd, stdin: stdin, done: make(chan error, 1), started: time.Now()}
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		if sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		_, _ = io.Copy(io.Discard, stdout)
		p.done <- cmd.Wait()
	}()
	select {
	case addr, ok := <-lines:
		if ok && addr != "" {
			p.addr = addr
			return p, nil
		}
		p.Close()
		return nil, errors.New("proxy: the child process exited without an address")
	case <-time.After(30 * time.Second):
		p.Close()
		return nil, errors.New("proxy: no address from the child process within 30s")
	}
}

// Close ends the child process (it closes its proxy when stdin closes) and
// waits for it; after 5s it is killed. It returns the share of one core
// the proxy used over its life (its CPU time over its wall time), or -1.
func (p *proxyProc) Close() float64 {
	p.once.Do(func() {
		_ = p.stdin.Close()
		select {
		case <-p.done:
		case <-time.After(5 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.done
		}
		p.share = -1
		if st := p.cmd.ProcessState; st != nil {
			p.share = float64(st.UserTime()+st.SystemTime()) / float64(time.Since(p.started))
		}
	})
	return p.share
}
