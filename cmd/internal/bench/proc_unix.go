//go:build unix

package bench

import (
	"syscall"
	"time"
)

// processCPU is this process's CPU time so far, user and system, every
// thread (getrusage RUSAGE_SELF).
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return -1
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
