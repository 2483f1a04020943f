package main

import "syscall"

// sysProcAttr makes the kernel kill a job runner when the demo dies, so an
// interrupted demo leaves no process behind.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
