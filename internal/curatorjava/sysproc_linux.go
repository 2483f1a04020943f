package curatorjava

import "syscall"

// sysProcAttr makes the kernel kill the JVM if the Go process dies, so that a
// crashed or killed test binary leaves no JVM (and no ZooKeeper session)
// behind.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
