//go:build !linux

package curatorjava

import "syscall"

// sysProcAttr has no parent-death signal outside Linux; the driver still
// exits when its stdin is closed.
func sysProcAttr() *syscall.SysProcAttr {
	return nil
}
