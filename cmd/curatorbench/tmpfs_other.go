//go:build !linux

package main

import "syscall"

// isTmpfs cannot tell outside Linux.
func isTmpfs(string) bool { return false }

// childProcAttr has no parent-death signal outside Linux.
func childProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{} }
