package bench

import (
	"strconv"
	"time"

	"github.com/gocurator/curator/cmd/internal/procstat"
)

// ProcessCPUOf is the CPU time (user and system, every thread) process
// pid has used so far, from Linux's /proc/PID/stat (utime and stime, in
// clock ticks of 1/100 s); -1 where that cannot be read.
func ProcessCPUOf(pid int) time.Duration {
	_, f, ok := procstat.Read(pid)
	if !ok || len(f) < 13 {
		return -1
	}
	user, e1 := strconv.ParseInt(f[11], 10, 64)
	sys, e2 := strconv.ParseInt(f[12], 10, 64)
	if e1 != nil || e2 != nil {
		return -1
	}
	return time.Duration(user+sys) * (time.Second / 100)
}
