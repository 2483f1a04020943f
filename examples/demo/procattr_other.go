//go:build !linux

package main

import "syscall"

// sysProcAttr has no parent-death signal outside Linux; the demo stops its
// job runners itself.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{}
}
