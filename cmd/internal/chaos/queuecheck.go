package chaos

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/framework"
)

// processPrefix starts the consumer name of a consumer process in its done
// markers (qconsume's "process-p<n>").
const processPrefix = "process-"

// marker is one done marker read from the server.
type marker struct {
	name string // "<id>-<sequence>"
	data string // "<consumer> <item node>"
}

// queueJudgement is what the lock-safety queue's check found for one
// workload.
type queueJudgement struct {
	consumed, byProcess, twice, lost int
	vs                               []Violation
}

// judgeQueue checks one workload's lock-safety queue: put maps each id put
// to whether the put was acknowledged (false: it failed, the item may be
// queued or not), markers each id to its done markers. Fenced consumption
// is exactly once for an acknowledged put and at most once for the others:
// two markers of one id are an item consumed twice, none for an
// acknowledged put an item lost, and a marker of an id never put is
// foreign. at is the time given to the violations.
func judgeQueue(wl string, put map[string]bool, markers map[string][]marker, at time.Duration) queueJudgement {
	var j queueJudgement
	add := func(format string, args ...any) {
		j.vs = append(j.vs, Violation{Kind: ViolationQueue, Workload: wl, At: at, Detail: fmt.Sprintf(format, args...)})
	}
	for _, id := range sortedKeys(markers) {
		ms := markers[id]
		j.consumed++
		if strings.HasPrefix(ms[0].data, processPrefix) {
			j.byProcess++
		}
		if _, ok := put[id]; !ok {
			add("done marker %s for id %s never put", ms[0].name, id)
		}
		if len(ms) > 1 {
			j.twice++
			var by []string
			for _, m := range ms {
				by = append(by, m.name+" ("+m.data+")")
			}
			add("item %s consumed %d times: %s", id, len(ms), strings.Join(by, ", "))
		}
	}
	for _, id := range sortedKeys(put) {
		if put[id] && len(markers[id]) == 0 {
			j.lost++
			add("acknowledged put %s never consumed", id)
		}
	}
	return j
}

// simpleJudgement is what the simple queue's check found for one workload.
type simpleJudgement struct {
	taken, twice, lost int
	vs                 []Violation
}

// judgeSimple checks one workload's simple queue, which is at most once
// (a delete whose reply is lost leaves its item with nobody): offered maps
// each id offered to whether the offer was acknowledged, taken each id to
// its takes. An id taken twice, or never offered, is a violation; an
// acknowledged offer never taken is counted (lost), not flagged.
func judgeSimple(wl string, offered map[string]bool, taken map[string]int, at time.Duration) simpleJudgement {
	var j simpleJudgement
	add := func(format string, args ...any) {
		j.vs = append(j.vs, Violation{Kind: ViolationSimpleQueue, Workload: wl, At: at, Detail: fmt.Sprintf(format, args...)})
	}
	for _, id := range sortedKeys(taken) {
		j.taken++
		if _, ok := offered[id]; !ok {
			add("took %s, never offered", id)
		}
		if n := taken[id]; n > 1 {
			j.twice++
			j.vs = append(j.vs, Violation{Kind: ViolationSimpleTwice, Workload: wl, At: at, Detail: fmt.Sprintf("took %s %d times", id, n)})
		}
	}
	for id, acked := range offered {
		if acked && taken[id] == 0 {
			j.lost++
		}
	}
	return j
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// readMarkers reads workload's done markers from the server, by id.
func readMarkers(ctx context.Context, c *framework.Client, wl string) (map[string][]marker, error) {
	done := QueuePathsOf(wl).Done
	buckets, _, err := c.Children(ctx, done)
	if err != nil {
		return nil, err
	}
	markers := map[string][]marker{}
	for _, b := range buckets {
		bp := framework.JoinPath(done, b)
		names, _, err := c.Children(ctx, bp)
		if err != nil {
			return nil, err
		}
		for _, n := range names {
			id, ok := markerID(n)
			if !ok {
				return nil, fmt.Errorf("%s: not a done marker: %q", bp, n)
			}
			data, _, err := c.Get(ctx, framework.JoinPath(bp, n))
			if err != nil {
				return nil, err
			}
			markers[id] = append(markers[id], marker{name: n, data: string(data)})
		}
	}
	return markers, nil
}

// check judges the queue workloads once run has returned, reading the
// done markers and the queues on the server with observer; it returns the
// stats, the violations and the end-state check of the queues.
func (r *queueRunner) check(ctx context.Context, observer *framework.Client) (QueueStats, []Violation, EndCheck) {
	r.mu.Lock()
	defer r.mu.Unlock()
	at := time.Since(r.start)
	var vs []Violation
	for _, wl := range Workloads {
		markers, err := readMarkers(ctx, observer, wl)
		if err != nil {
			vs = append(vs, Violation{Kind: ViolationQueue, Workload: wl, At: at, Detail: fmt.Sprintf("cannot read the done markers: %v", err)})
		} else {
			j := judgeQueue(wl, r.put[wl], markers, at)
			r.stats.Consumed[wl], r.stats.ByProcess[wl], r.stats.Twice[wl], r.stats.Lost[wl] = j.consumed, j.byProcess, j.twice, j.lost
			vs = append(vs, j.vs...)
		}
		s := judgeSimple(wl, r.offered[wl], r.taken[wl], at)
		r.stats.Taken[wl], r.stats.TakenTwice[wl], r.stats.SimpleLost[wl] = s.taken, s.twice, s.lost
		vs = append(vs, s.vs...)
	}
	r.stats.Drain = r.drain
	end := EndCheck{Name: "queues drained", OK: true, Detail: fmt.Sprintf("items, locks and simple queues empty, %v after the producers stopped", r.drain.Round(time.Millisecond))}
	var left []string
	for _, wl := range Workloads {
		p := QueuePathsOf(wl)
		for _, path := range []string{p.Items, p.Locks, p.Simple} {
			kids, _, err := observer.Children(ctx, path)
			if err != nil && !errors.Is(err, zk.ErrNoNode) {
				left = append(left, fmt.Sprintf("%s: %v", path, err))
			} else if len(kids) > 0 {
				sort.Strings(kids)
				left = append(left, fmt.Sprintf("%s: %d left, first %s", path, len(kids), kids[0]))
			}
		}
	}
	if len(left) > 0 || !r.drained {
		end.OK = false
		end.Detail = fmt.Sprintf("not drained within %v: %s", endStateDeadline, strings.Join(left, "; "))
		vs = append(vs, Violation{Kind: ViolationQueue, At: at, Detail: "queues not drained: " + strings.Join(left, "; ")})
	}
	return r.stats, vs, end
}

// writeQueues adds the queue workloads' lines to the report.
func (r Report) writeQueues(b *strings.Builder) {
	q := r.Queue
	fmt.Fprintf(b, "  queue (fenced):    put %s; unknown %s; consumed %s, by processes %s\n",
		formatMap(q.Put, Workloads), formatMap(q.PutUnknown, Workloads), formatMap(q.Consumed, Workloads), formatMap(q.ByProcess, Workloads))
	fmt.Fprintf(b, "    exactly once:    consumed twice %s; acknowledged and lost %s; handled by consumers %s\n",
		formatMap(q.Twice, Workloads), formatMap(q.Lost, Workloads), formatMap(q.Handled, Workloads))
	fmt.Fprintf(b, "    processes:       started %s; killed (SIGKILL) %s; exited by themselves %s; drained %v after the producers stopped\n",
		formatMap(q.Starts, Workloads), formatMap(q.Kills, Workloads), formatMap(q.Exits, Workloads), q.Drain.Round(time.Millisecond))
	fmt.Fprintf(b, "  simple queue:      offered %s; unknown %s; taken %s; taken twice %s; lost (at most once) %s\n",
		formatMap(q.Offered, Workloads), formatMap(q.OfferUnknown, Workloads), formatMap(q.Taken, Workloads),
		formatMap(q.TakenTwice, Workloads), formatMap(q.SimpleLost, Workloads))
}
