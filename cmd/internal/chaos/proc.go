package chaos

import (
	"fmt"
	"os"
	"strconv"
	"syscall"

	"github.com/gocurator/curator/cmd/internal/procstat"
)

// The exec rounds' OS check reads Linux's /proc: elsewhere no process is
// found, and only the server's check judges the round.

// proc is a process of an exec round's tree, known by its pid and its start
// time (field 22 of /proc/PID/stat), so that a reused pid is not taken for
// it.
type proc struct {
	pid   int
	start string
	comm  string
	ppid  int
	pgrp  int
}

func (p proc) String() string { return fmt.Sprintf("%d (%s)", p.pid, p.comm) }

// readProc reads /proc/PID/stat; ok is false when there is no such process
// or it is a zombie (dead, not yet reaped: a parent that is gone left it to
// an init that may never reap it).
func readProc(pid int) (p proc, ok bool) {
	comm, f, ok := procstat.Read(pid)
	if !ok || len(f) < 20 || f[0] == "Z" || f[0] == "X" {
		return proc{}, false
	}
	p = proc{pid: pid, comm: comm, start: f[19]}
	p.ppid, _ = strconv.Atoi(f[1])
	p.pgrp, _ = strconv.Atoi(f[2])
	return p, true
}

// alive reports whether p is still running (not a zombie), the same process.
func (p proc) alive() bool {
	q, ok := readProc(p.pid)
	return ok && q.start == p.start
}

// groupMembers returns the live processes of process group pgrp.
func groupMembers(pgrp int) []proc {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var ps []proc
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if p, ok := readProc(pid); ok && p.pgrp == pgrp {
			ps = append(ps, p)
		}
	}
	return ps
}

// kill SIGKILLs p if it is still the same live process.
func (p proc) kill() {
	if p.alive() {
		_ = syscall.Kill(p.pid, syscall.SIGKILL)
	}
}
