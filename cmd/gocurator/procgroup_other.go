//go:build !unix || aix

package main

import (
	"os"
	"os/exec"
	"syscall"
)

// jobSignals is empty: no job control.
var jobSignals []os.Signal

// procGroup is, without Unix process groups (or, on AIX, package
// syscall's wait4 flags), the command alone: signals reach only it, and
// what it starts is not waited for.
type procGroup struct{ cmd *exec.Cmd }

// startGroup starts cmd.
func startGroup(cmd *exec.Cmd) (*procGroup, error) {
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &procGroup{cmd: cmd}, nil
}

// signal sends s to the command.
func (g *procGroup) signal(s syscall.Signal) { _ = g.cmd.Process.Signal(s) }

// relay passes a signal gocurator received on to the command.
func (g *procGroup) relay(s os.Signal) { _ = g.cmd.Process.Signal(s) }

// terminate sends the command SIGTERM.
func (g *procGroup) terminate() { g.signal(syscall.SIGTERM) }

// kill kills the command.
func (g *procGroup) kill() { _ = g.cmd.Process.Kill() }

// empty is true: there is no group to wait for.
func (g *procGroup) empty() bool { return true }
