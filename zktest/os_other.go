//go:build !linux

package zktest

import "syscall"

// sysProcAttr has no parent-death signal outside Linux: servers are stopped
// by Close and t.Cleanup only.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{}
}

// processAlive cannot tell here, so nothing is ever swept as stale.
func processAlive(int) bool { return true }
