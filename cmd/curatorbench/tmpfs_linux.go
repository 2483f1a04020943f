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
