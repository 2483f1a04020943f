package zktest

import (
	"os"
	"sync"
	"syscall"
	"time"
	"unsafe"
)

// timerfd flags and clock, from linux/timerfd.h and linux/time.h.
const (
	clockMonotonic = 1
	tfdNonblock    = syscall.O_NONBLOCK
	tfdCloexec     = syscall.O_CLOEXEC
)

// itimerspec is struct itimerspec.
type itimerspec struct {
	interval, value syscall.Timespec
}

// fdClock is a timerfd that Go's netpoller waits on: the kernel's
// high-resolution timer wakes the waiting goroutine within tens of
// microseconds of the due time, where Go's own timers round a wait up to a
// millisecond, and no thread is blocked while it waits.
type fdClock struct {
	fd int
	f  *os.File // owns fd; reads block in the netpoller

	once sync.Once
}

// newClock returns a timerfd clock, or Go's timers if the kernel refuses
// one.
func newClock() clock {
	fd, _, errno := syscall.Syscall(syscall.SYS_TIMERFD_CREATE, clockMonotonic, tfdNonblock|tfdCloexec, 0)
	if errno != 0 {
		return newTimerClock()
	}
	// A non-blocking descriptor gives a File that the netpoller waits on.
	return &fdClock{fd: int(fd), f: os.NewFile(fd, "timerfd")}
}

func (k *fdClock) arm(due time.Time) {
	// A zero value would disarm the timer: fire in a nanosecond instead.
	d := max(time.Until(due), 1)
	spec := itimerspec{value: syscall.NsecToTimespec(int64(d))}
	// Setting the timer also forgets an expiration not yet read. It
	// fails only once the clock is closed, when nobody waits any more.
	_, _, _ = syscall.Syscall6(syscall.SYS_TIMERFD_SETTIME, uintptr(k.fd), 0,
		uintptr(unsafe.Pointer(&spec)), 0, 0, 0)
}

func (k *fdClock) wait() bool {
	var expirations [8]byte
	_, err := k.f.Read(expirations[:])
	return err == nil
}

func (k *fdClock) close() { k.once.Do(func() { k.f.Close() }) }
