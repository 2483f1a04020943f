package curatorjava

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

const (
	// DefaultSessionTimeout is the ZooKeeper session timeout of a driver
	// started by StartDriver.
	DefaultSessionTimeout = 15 * time.Second
	// DefaultTimeout bounds how long Do waits for a response.
	DefaultTimeout = 60 * time.Second
	// startTimeout bounds JVM start plus connecting to ZooKeeper.
	startTimeout = 60 * time.Second
	// quitGrace is how long a driver may take to close its client and exit
	// after its stdin is closed, before it is killed.
	quitGrace = 3 * time.Second
	// stderrLimit is how much of the driver's stderr (the tail) is kept.
	stderrLimit = 256 << 10
)

// driverJVMOptions favour start-up time over peak performance: the driver's
// work is dominated by ZooKeeper round trips.
var driverJVMOptions = []string{
	"-XX:+UseSerialGC",
	"-XX:TieredStopAtLevel=1",
	"-Xshare:auto",
	"-Xmx256m",
}

// CommandError is the error returned by [Driver.Do] when the driver answered
// ERR: the Java exception's class and message.
type CommandError struct {
	Command string // the command as sent
	Class   string // fully qualified Java exception class
	Message string
}

func (e *CommandError) Error() string {
	return fmt.Sprintf("curatorjava: %q: %s: %s", e.Command, e.Class, e.Message)
}

// Driver is a running Driver.java process: one Curator client, that is one
// ZooKeeper session, driven line by line. Its methods are safe for
// concurrent use; commands are executed one at a time in the order Do is
// called.
type Driver struct {
	t       testing.TB
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	stderr  *TailBuffer
	started time.Time
	startup time.Duration

	responses  chan string   // response lines (OK/ERR), in order
	events     chan string   // EVENT payloads, unbounded via pump
	exited     chan struct{} // closed when the driver's stdout reached EOF
	readerDone chan struct{}
	pumpDone   chan struct{}
	stop       chan struct{} // closed by cleanup to stop the pump

	mu     sync.Mutex // serializes Do and guards the fields below
	broken error      // set when the protocol can no longer be trusted
	closed bool
}

// StartDriver starts a Curator driver connected to connectString with
// DefaultSessionTimeout and waits until its client is connected. The driver
// is closed when the test and its subtests finish. If Java or the Curator
// jars are missing, or the driver cannot start, the test fails (it is never
// skipped) with instructions to install them.
func StartDriver(t testing.TB, connectString string) *Driver {
	t.Helper()
	return StartDriverSession(t, connectString, DefaultSessionTimeout)
}

// StartDriverSession is StartDriver with a chosen ZooKeeper session timeout.
func StartDriverSession(t testing.TB, connectString string, sessionTimeout time.Duration) *Driver {
	t.Helper()
	cmd, err := Command(context.Background(), driverSources, "curatorjava.Driver", driverJVMOptions,
		connectString, strconv.FormatInt(sessionTimeout.Milliseconds(), 10))
	if err != nil {
		t.Fatalf("curatorjava: cannot start the Curator driver: %v", err)
	}
	d := &Driver{
		t:          t,
		cmd:        cmd,
		stderr:     NewTailBuffer(stderrLimit),
		responses:  make(chan string, 16),
		events:     make(chan string),
		exited:     make(chan struct{}),
		readerDone: make(chan struct{}),
		pumpDone:   make(chan struct{}),
		stop:       make(chan struct{}),
	}
	d.cmd.Stderr = d.stderr
	stdout, err := d.cmd.StdoutPipe()
	if err != nil {
		t.Fatalf("curatorjava: %v", err)
	}
	if d.stdin, err = d.cmd.StdinPipe(); err != nil {
		t.Fatalf("curatorjava: %v", err)
	}
	d.started = time.Now()
	if err := d.cmd.Start(); err != nil {
		t.Fatalf("curatorjava: starting %s: %v", d.cmd.Path, err)
	}
	eventsIn := make(chan string)
	go d.read(stdout, eventsIn)
	go func() {
		defer close(d.pumpDone)
		pump(eventsIn, d.events, d.stop)
	}()
	t.Cleanup(d.close)

	resp, err := d.await("startup", startTimeout)
	if err == nil && resp != "ready" {
		err = fmt.Errorf("curatorjava: unexpected first response %q", resp)
	}
	if err != nil {
		t.Fatalf("curatorjava: driver for %s did not start: %v\nstderr:\n%s", connectString, err, d.stderr.String())
	}
	d.startup = time.Since(d.started)
	return d
}

// read splits the driver's stdout into responses and events until EOF.
func (d *Driver) read(stdout io.Reader, events chan<- string) {
	defer close(d.readerDone)
	defer close(events)
	defer close(d.exited)
	r := bufio.NewReader(stdout)
	for {
		line, err := r.ReadString('\n')
		line = strings.TrimRight(line, "\r\n")
		if line != "" {
			if ev, ok := strings.CutPrefix(line, "EVENT "); ok {
				events <- ev // never blocks for long: pump always receives
			} else {
				select {
				case d.responses <- line:
				default:
					// Only possible after a timed-out command, when the
					// driver is being killed anyway.
				}
			}
		}
		if err != nil {
			return
		}
	}
}

// StartupTime is how long the driver took from process start to a connected
// Curator client.
func (d *Driver) StartupTime() time.Duration { return d.startup }

// Do sends one command line and returns the result after "OK " ("" for a
// bare "OK"). An ERR response is returned as a *CommandError; the driver
// stays usable. If no response arrives within the timeout, or the driver
// died, Do returns an error, marks the test as failed, kills the driver and
// fails all later commands. After a successful "quit" the driver exits and
// later commands return an error.
func (d *Driver) Do(cmd string) (string, error) {
	if cmd == "" || strings.ContainsAny(cmd, "\r\n") {
		return "", fmt.Errorf("curatorjava: invalid command %q: want one non-empty line", cmd)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.broken != nil {
		return "", d.broken
	}
	if d.closed {
		return "", errors.New("curatorjava: driver already closed or quit")
	}
	if _, err := io.WriteString(d.stdin, cmd+"\n"); err != nil {
		return "", d.breakLocked(fmt.Errorf("curatorjava: sending %q: %w", cmd, err))
	}
	resp, err := d.await(cmd, DefaultTimeout)
	if err != nil {
		return "", d.breakLocked(err)
	}
	if rest, ok := strings.CutPrefix(resp, "ERR "); ok {
		class, msg, _ := strings.Cut(rest, ": ")
		return "", &CommandError{Command: cmd, Class: class, Message: msg}
	}
	if cmd == "quit" {
		d.closed = true
	}
	return resp, nil
}

// MustDo is Do that fails the test (t.Fatal) on any error. Like t.Fatal, it
// must be called from the test's goroutine.
func (d *Driver) MustDo(cmd string) string {
	d.t.Helper()
	res, err := d.Do(cmd)
	if err != nil {
		d.t.Fatal(err)
	}
	return res
}

// await waits for the next response line and strips "OK".
func (d *Driver) await(cmd string, timeout time.Duration) (string, error) {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var line string
	select {
	case line = <-d.responses:
	case <-d.exited:
		// The reader delivers a final response before it reports EOF.
		select {
		case line = <-d.responses:
		default:
			return "", fmt.Errorf("curatorjava: driver exited before answering %q", cmd)
		}
	case <-timer.C:
		return "", fmt.Errorf("curatorjava: no response to %q within %v", cmd, timeout)
	}
	switch {
	case line == "OK":
		return "", nil
	case strings.HasPrefix(line, "OK "):
		return line[len("OK "):], nil
	case strings.HasPrefix(line, "ERR "):
		return line, nil
	default:
		return "", fmt.Errorf("curatorjava: malformed response to %q: %q", cmd, line)
	}
}

// breakLocked records a protocol failure: the test fails, the driver is
// killed, and every later Do returns err.
func (d *Driver) breakLocked(err error) error {
	d.broken = err
	d.t.Errorf("%v\ndriver stderr (tail):\n%s", err, d.stderr.String())
	_ = d.cmd.Process.Kill()
	return err
}

// Events returns the asynchronous notifications of the driver, without the
// "EVENT " prefix, for example "state CONNECTED" or "revoked m1". Events are
// queued without bound until read; the channel is closed when the driver
// exits.
func (d *Driver) Events() <-chan string { return d.events }

// WaitEvent reads Events, discarding other events, until one equals want.
// It fails if the driver exits first or timeout elapses.
func (d *Driver) WaitEvent(want string, timeout time.Duration) error {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for {
		select {
		case ev, ok := <-d.events:
			if !ok {
				return fmt.Errorf("curatorjava: driver exited while waiting for event %q", want)
			}
			if ev == want {
				return nil
			}
		case <-timer.C:
			return fmt.Errorf("curatorjava: no event %q within %v", want, timeout)
		}
	}
}

// close ends the driver: closing stdin makes it release its handles, close
// its ZooKeeper session and exit; it is killed if that takes longer than
// quitGrace. The driver's stderr is logged if the test failed.
func (d *Driver) close() {
	d.mu.Lock()
	d.closed = true
	d.mu.Unlock()
	_ = d.stdin.Close()
	timer := time.NewTimer(quitGrace)
	select {
	case <-d.readerDone:
	case <-timer.C:
		_ = d.cmd.Process.Kill()
		<-d.readerDone
	}
	timer.Stop()
	waitErr := d.cmd.Wait()
	close(d.stop)
	<-d.pumpDone
	if d.t.Failed() {
		d.t.Logf("curatorjava: driver %v exited (%v); stderr:\n%s", d.cmd.Args[len(d.cmd.Args)-2:], waitErr, d.stderr.String())
	}
}

// TailBuffer is an io.Writer keeping the last bytes written to it, up to a
// limit: a child process's stderr, kept for the error that reports its
// failure. It is safe for concurrent use.
type TailBuffer struct {
	mu      sync.Mutex
	limit   int
	buf     []byte
	dropped bool
}

// NewTailBuffer returns a TailBuffer keeping the last limit bytes.
func NewTailBuffer(limit int) *TailBuffer { return &TailBuffer{limit: limit} }

func (b *TailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if over := len(b.buf) - b.limit; over > 0 {
		b.buf = append(b.buf[:0], b.buf[over:]...)
		b.dropped = true
	}
	return len(p), nil
}

// String returns the bytes kept, after "[...]\n" if earlier ones were
// dropped.
func (b *TailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.dropped {
		return "[...]\n" + string(b.buf)
	}
	return string(b.buf)
}
