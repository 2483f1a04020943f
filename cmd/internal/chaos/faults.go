package chaos

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"strings"
	"sync"
	"time"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/zktest"
)

// Fault kinds.
const (
	FaultKillLeader      = "kill-leader"
	FaultKillFollower    = "kill-follower"
	FaultRestartServer   = "restart-server"
	FaultCutShort        = "cut-short"
	FaultCutLong         = "cut-long"
	FaultLostReply       = "lost-reply"
	FaultEnsembleRestart = "ensemble-restart"
	FaultSilentShort     = "silent-short"
	FaultSilentLong      = "silent-long"
	FaultCutGrant        = "cut-grant"
	FaultCutLeave        = "cut-leave"
)

// FaultKinds lists every fault kind, in the order of the schedule's rounds
// before shuffling.

var FaultKinds = []string{
	FaultKillLeader, FaultKillFollower, FaultRestartServer, FaultCutShort,
	FaultCutLong, FaultLostReply, FaultEnsembleRestart, FaultSilentShort,
	FaultSilentLong, FaultCutGrant, FaultCutLeave,
}

// injector injects one fault at a time and heals it.
type injector struct {
	ens       *zktest.Ensemble
	proxies   [][]*zktest.Proxy // [client][server]
	clients   []*framework.Client
	workloads []string // of each client
	rec       *recorder
	rng       *rand.Rand
	st        time.Duration
	// For the timed cuts: a client of the harness's own, connected
	// directly, that watches the queues; each client's cut window and
	// lock handles.
	logf     func(string, ...any)
	observer *framework.Client
	windows  []*cutWindow
	probes   [][]probe

	// leaving names a client whose double-barrier member waits in Leave
	// for the others (the cut-leave fault's cue); cutLeaves counts them.
	leaving   <-chan int
	cutLeaves int

	mu    sync.Mutex
	armed []<-chan struct{} // lost-reply faults armed
}

// between returns a random duration in [lo, hi).
func (in *injector) between(lo, hi time.Duration) time.Duration {
	return lo + time.Duration(in.rng.Int63n(int64(hi-lo)))
}

// inject runs one fault of kind to its heal. An error means the harness
// could not heal (a server would not restart), not a failed guarantee.
func (in *injector) inject(kind string) (Fault, error) {
	f := Fault{Kind: kind, Start: time.Now()}
	var err error
	switch kind {
	case FaultKillLeader:
		err = in.killLeader(&f)
	case FaultKillFollower:
		err = in.killFollower(&f)
	case FaultRestartServer:
		s := in.ens.Servers()[in.rng.Intn(len(in.ens.Servers()))]
		f.Detail = fmt.Sprintf("server %d", s.ID())
		err = errors.Join(s.Stop(), in.pause(), s.Restart())
	case FaultCutShort:
		in.cut(&f, in.st/2)
	case FaultCutLong:
		in.cut(&f, 2*in.st)
	case FaultLostReply:
		in.lostReply(&f)
	case FaultSilentShort:
		in.silent(&f, in.rng.Intn(len(in.proxies)), "", in.st/2)
	case FaultSilentLong:
		i, how := in.freshLongHolder()
		in.silent(&f, i, how, 2*in.st)
	case FaultCutGrant:
		in.cutGrants(&f)
	case FaultCutLeave:
		in.cutLeave(&f)
	case FaultEnsembleRestart:
		f.Detail = "all servers"
		err = in.restartAll()
	default:
		err = fmt.Errorf("chaos: unknown fault %q", kind)
	}
	f.Heal = time.Now()
	if err != nil {
		return f, fmt.Errorf("chaos: %s (%s): %w", kind, f.Detail, err)
	}
	return f, nil
}

// pause is the downtime of a stopped or killed server.
func (in *injector) pause() error {
	time.Sleep(in.between(500*time.Millisecond, 1500*time.Millisecond))
	return nil
}

func (in *injector) awaitLeader(exclude ...*zktest.Server) (*zktest.Server, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	return in.ens.AwaitLeader(ctx, exclude...)
}

func (in *injector) killLeader(f *Fault) error {
	leader, err := in.awaitLeader()
	if err != nil {
		return err
	}
	f.Detail = fmt.Sprintf("server %d", leader.ID())
	if err := leader.Kill(); err != nil {
		return err
	}
	_, err = in.awaitLeader(leader)
	return errors.Join(err, leader.Restart())
}

func (in *injector) killFollower(f *Fault) error {
	leader, err := in.awaitLeader()
	if err != nil {
		return err
	}
	var followers []*zktest.Server
	for _, s := range in.ens.Servers() {
		if s != leader {
			followers = append(followers, s)
		}
	}
	s := followers[in.rng.Intn(len(followers))]
	f.Detail = fmt.Sprintf("server %d", s.ID())
	return errors.Join(s.Kill(), in.pause(), s.Restart())
}

func (in *injector) cut(f *Fault, d time.Duration) {
	i := in.rng.Intn(len(in.proxies))
	f.Detail = fmt.Sprintf("client %d (%s) for %v", i, in.workloads[i], d)
	cutAll(in.proxies[i], "")
	time.Sleep(d)
	for _, p := range in.proxies[i] {
		p.Restore()
	}
}

// leaveCutsPerFault is the most cuts one cut-leave fault makes.
const leaveCutsPerFault = 4

// cutLeave is the cut-leave fault: up to leaveCutsPerFault times within
// a few session timeouts, it waits for a double-barrier member that has
// begun a Leave while other members of its round are still in, and cuts
// its client for 100-600 ms, then restores it: the reconnect wakes the
// Leave, which must look again rather than return (issue 33; GH-1290's
// pattern in Leave). The barrier workload checks each Leave that returns
// nil on the server.
func (in *injector) cutLeave(f *Fault) {
	deadline := time.Now().Add(4 * in.st)
	var parts []string
	for len(parts) < leaveCutsPerFault {
		// Drop a stale cue: the member it names may have left already.
		select {
		case <-in.leaving:
		default:
		}
		wait := time.Until(deadline)
		if wait <= 0 {
			break
		}
		t := time.NewTimer(wait)
		var i int
		select {
		case i = <-in.leaving:
			t.Stop()
		case <-t.C:
		}
		if !time.Now().Before(deadline) {
			break
		}
		d := in.between(100*time.Millisecond, 600*time.Millisecond)
		parts = append(parts, fmt.Sprintf("client %d (%s) %v", i, in.workloads[i], d.Round(time.Millisecond)))
		in.cutLeaves++
		cutAll(in.proxies[i], "")
		time.Sleep(d)
		for _, p := range in.proxies[i] {
			p.Restore()
		}
	}
	f.Detail = fmt.Sprintf("%d members cut in Leave: %s", len(parts), strings.Join(parts, ", "))
}

// silent partitions client i silently (BlackHole on all its proxies) for d,
// then restores it. The restore closes the connections that lost bytes.
func (in *injector) silent(f *Fault, i int, how string, d time.Duration) {
	if how != "" {
		how = ", " + how
	}
	f.Detail = fmt.Sprintf("client %d (%s%s) for %v", i, in.workloads[i], how, d)
	f.Start = time.Now() // not counting the wait for a fresh holder
	for _, p := range in.proxies[i] {
		p.BlackHole()
	}
	time.Sleep(d)
	for _, p := range in.proxies[i] {
		p.Restore()
	}
}

// freshLongHolder picks a workload and a lock (its long mutex or its
// election, at random) and waits, at most a few session timeouts, for the
// next acquisition of that lock, returning the client that made it: a
// silent partition that starts with a long hold (or a long term) outlasts
// the holder's session while the holder still plans to hold, the case in
// which a late Done lets two holders believe at once. Without an
// acquisition in time it returns a random client.
func (in *injector) freshLongHolder() (int, string) {
	w := Workloads[in.rng.Intn(len(Workloads))]
	lock, what := pathsOf(w).long, "long-mutex holder"
	if in.rng.Intn(2) == 0 {
		lock, what = pathsOf(w).election, "election leader"
	}
	random := in.rng.Intn(len(in.proxies))
	t := time.NewTimer(4 * in.st)
	defer t.Stop()
	select {
	case c := <-in.rec.nextHolder(lock):
		return c, "fresh " + what
	case <-t.C:
		return random, "no fresh " + w + " " + what
	}
}

// lostReply arms the lost-reply fault on the proxy the client is connected
// through (on all of its proxies if that is unknown) and waits for it to
// fire, at most twice the session timeout. A fault that does not fire stays
// armed and may fire later; fired ones are counted at the end.
func (in *injector) lostReply(f *Fault) {
	i := in.rng.Intn(len(in.proxies))
	var targets []*zktest.Proxy
	if conn := in.clients[i].Conn(); conn != nil {
		for _, p := range in.proxies[i] {
			if p.Addr() == conn.Server() {
				targets = append(targets, p)
			}
		}
	}
	if len(targets) == 0 {
		targets = in.proxies[i]
	}
	fired, stop := make(chan struct{}), make(chan struct{})
	var once sync.Once
	var wg sync.WaitGroup
	var chans []<-chan struct{}
	for _, p := range targets {
		ch := p.LoseNextCreateReply()
		chans = append(chans, ch)
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case <-ch:
				once.Do(func() { close(fired) })
			case <-stop:
			}
		}()
	}
	in.mu.Lock()
	in.armed = append(in.armed, chans...)
	in.mu.Unlock()
	t := time.NewTimer(2 * in.st)
	defer t.Stop()
	select {
	case <-fired:
		f.Detail = fmt.Sprintf("client %d (%s), fired", i, in.workloads[i])
	case <-t.C:
		f.Detail = fmt.Sprintf("client %d (%s), not fired yet", i, in.workloads[i])
	}
	close(stop)
	wg.Wait()
}

// lostReplies counts the lost-reply faults armed and fired. Channels armed
// twice on one proxy before firing are the same channel, counted once.
func (in *injector) lostReplies() (armed, fired int) {
	in.mu.Lock()
	defer in.mu.Unlock()
	seen := map[<-chan struct{}]bool{}
	for _, ch := range in.armed {
		if seen[ch] {
			continue
		}
		seen[ch] = true
		armed++
		select {
		case <-ch:
			fired++
		default:
		}
	}
	return armed, fired
}

func (in *injector) restartAll() error {
	var errs []error
	for _, s := range in.ens.Servers() {
		errs = append(errs, s.Stop())
	}
	errs = append(errs, in.pause())
	var wg sync.WaitGroup
	restarted := make([]error, len(in.ens.Servers()))
	for i, s := range in.ens.Servers() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			restarted[i] = s.Restart()
		}()
	}
	wg.Wait()
	return errors.Join(append(errs, restarted...)...)
}

// healAll restores every proxy and restarts every server that is down.
func (in *injector) healAll() error {
	for _, ps := range in.proxies {
		for _, p := range ps {
			p.Restore()
		}
	}
	var wg sync.WaitGroup
	errs := make([]error, len(in.ens.Servers()))
	for i, s := range in.ens.Servers() {
		if s.Running() {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = s.Restart()
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}
