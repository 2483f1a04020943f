package main

import "syscall"

// tmpfsMagic is TMPFS_MAGIC from linux/magic.h.
const tmpfsMagic = 0x01021994

// isTmpfs reports whether dir is on a tmpfs, where the server's
// transaction log costs no disk I/O.
func isTmpfs(dir string) bool {
	var st syscall.Statfs_t
	return syscall.Statfs(dir, &st) == nil && st.Type == tmpfsMagic
}

// childProcAttr makes the kernel end a child process (the proxy) when this
// process dies.
func childProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
