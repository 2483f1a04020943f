package zktest

import (
	"syscall"
	"time"
)

// prSetTimerSlack is PR_SET_TIMERSLACK from linux/prctl.h.
const prSetTimerSlack = 29

// preciseSleep blocks the calling thread in nanosleep for d, with the
// thread's timer slack (50µs by default) set to 1ns first: the delay line
// then wakes within tens of microseconds of the time it asks for, where Go's
// timers wake up to a millisecond late. Setting the slack of whichever
// runtime thread runs it is harmless: it only makes that thread's timed
// waits more precise.
var preciseSleep = func(d time.Duration) {
	_, _, _ = syscall.Syscall(syscall.SYS_PRCTL, prSetTimerSlack, 1, 0)
	ts := syscall.NsecToTimespec(int64(d))
	_ = syscall.Nanosleep(&ts, nil)
}
