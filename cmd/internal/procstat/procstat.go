// Package procstat reads a process's line of Linux's /proc/PID/stat, for
// the tools that account a process (the chaos rounds' process checks, the
// benchmark's server CPU time). Elsewhere no process is found.
package procstat

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Read returns process pid's command name and the fields of its stat line
// after it: fields[0] is the state (field 3 of proc(5)), fields[1] the
// parent's pid, fields[11] and fields[12] utime and stime in clock ticks,
// fields[19] the start time. ok is false when there is no such process or
// the line cannot be read.
func Read(pid int) (comm string, fields []string, ok bool) {
	if pid <= 0 {
		return "", nil, false
	}
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return "", nil, false
	}
	// pid (comm) state ppid ...: comm may hold spaces and parentheses.
	s := string(b)
	open, closing := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || closing < open {
		return "", nil, false
	}
	return s[open+1 : closing], strings.Fields(s[closing+1:]), true
}
