package zktest

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// process is one run of a server's JVM.
type process struct {
	cmd  *exec.Cmd
	done chan struct{} // closed once the JVM has exited and been reaped
	err  error         // cmd.Wait's result; read only after done is closed
}

// startProcess starts java with args, appending its stdout and stderr to
// log (and copying them to tee when not nil).
func startProcess(java string, args []string, dir string, log *os.File, tee io.Writer) (*process, error) {
	cmd := exec.Command(java, args...)
	cmd.Dir = dir
	if tee == nil {
		cmd.Stdout = log
	} else {
		cmd.Stdout = io.MultiWriter(log, tee)
	}
	cmd.Stderr = cmd.Stdout
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("zktest: start %s: %w", java, err)
	}
	p := &process{cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// exited reports whether the JVM has exited.
func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// stop sends sig and waits for the exit; after grace it sends SIGKILL. It
// blocks until the process is reaped.
func (p *process) stop(sig syscall.Signal, grace time.Duration) {
	if p.exited() {
		return
	}
	// The error only says the process is already gone, which done reports.
	_ = p.cmd.Process.Signal(sig)
	if sig == syscall.SIGKILL {
		<-p.done
		return
	}
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-p.done:
	case <-t.C:
		_ = p.cmd.Process.Signal(syscall.SIGKILL)
		<-p.done
	}
}
