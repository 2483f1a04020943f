package bench

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// ProcessCPUOf is the CPU time (user and system, every thread) process
// pid has used so far, from Linux's /proc/PID/stat (utime and stime, in
// clock ticks of 1/100 s); -1 where that cannot be read.
func ProcessCPUOf(pid int) time.Duration {
	if pid <= 0 {
		return -1
	}
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return -1
	}
	// pid (comm) state ppid ...: comm may hold spaces and parentheses;
	// utime and stime are fields 14 and 15.
	s := string(b)
	closing := strings.LastIndexByte(s, ')')
	if closing < 0 {
		return -1
	}
	f := strings.Fields(s[closing+1:])
	if len(f) < 13 {
		return -1
	}
	user, e1 := strconv.ParseInt(f[11], 10, 64)
	sys, e2 := strconv.ParseInt(f[12], 10, 64)
	if e1 != nil || e2 != nil {
		return -1
	}
	return time.Duration(user+sys) * (time.Second / 100)
}
