package main

import "syscall"

// prSetChildSubreaper is prctl's PR_SET_CHILD_SUBREAPER (linux/prctl.h),
// which package syscall does not name.
const prSetChildSubreaper = 36

// adoptOrphans makes gocurator a child subreaper: a process its command
// orphans becomes gocurator's child instead of init's, so that procGroup
// can reap it. Without it (a kernel before 3.4) the orphans' zombies wait
// for init, and exec with them.
func adoptOrphans() { _, _, _ = syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0) }
