//go:build unix && !aix

package main

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
)

// jobSignals are the job-control signals exec relays once the command
// runs. The group is not the terminal's foreground group, so Ctrl-Z's
// SIGTSTP reaches gocurator alone: it stops the group (SIGSTOP, which no
// member can ignore), then itself; the SIGCONT that resumes gocurator
// resumes the group.
var jobSignals = []os.Signal{syscall.SIGTSTP, syscall.SIGCONT}

// procGroup is the process group exec runs its command in: the command
// and all it starts, unless a process leaves the group (setsid, setpgid),
// which puts it out of reach. Signals go to the whole group, and exec
// waits until the group is empty, so that nothing started under a hold
// outlives it.
type procGroup struct{ pgid int }

// startGroup starts cmd as the leader of a new process group. It first
// makes gocurator the reaper of the processes the command orphans (on
// Linux), so that their zombies, which still count as members, do not keep
// the group from emptying while a slow or absent init leaves them unreaped.
func startGroup(cmd *exec.Cmd) (*procGroup, error) {
	adoptOrphans()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &procGroup{pgid: cmd.Process.Pid}, nil
}

// signal sends s to every process of the group.
func (g *procGroup) signal(s syscall.Signal) { _ = syscall.Kill(-g.pgid, s) }

// relay passes on a signal gocurator received: to the group, or, for
// SIGTSTP, as SIGSTOP to the group and to gocurator.
func (g *procGroup) relay(s os.Signal) {
	if s == syscall.SIGTSTP {
		g.signal(syscall.SIGSTOP)
		_ = syscall.Kill(os.Getpid(), syscall.SIGSTOP)
		return
	}
	g.signal(s.(syscall.Signal))
}

// terminate sends the group SIGTERM, and SIGCONT so that a stopped member
// gets it now rather than at its SIGKILL.
func (g *procGroup) terminate() {
	g.signal(syscall.SIGTERM)
	g.signal(syscall.SIGCONT)
}

// kill sends the group SIGKILL.
func (g *procGroup) kill() { g.signal(syscall.SIGKILL) }

// empty reports whether no process of the group is left. It first reaps
// gocurator's children that have ended: orphans it adopted, from the group
// or not (all orphans, when it runs as a container's init). Call it only
// once the leader has been waited for, the one child whose status matters:
// it would take it from cmd.Wait.
func (g *procGroup) empty() bool {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil || pid <= 0 {
			break
		}
	}
	// ESRCH: no process has the group's id. EPERM is a member exec may
	// not signal: still one.
	return errors.Is(syscall.Kill(-g.pgid, 0), syscall.ESRCH)
}
