package retry

import (
	"context"
	"time"
)

// frame is one Do call's place in a chain of nested calls sharing a budget.
type frame struct {
	parent *frame // the enclosing Do, nil for the outermost
	policy Policy // this call's instance of its policy
	budget *budget
}

// enter returns the frame of a Do with policy p called with ctx.
func enter(ctx context.Context, p Policy, now time.Time) *frame {
	parent, _ := ctx.Value(budgetKey{}).(*frame)
	f := &frame{parent: parent, policy: p}
	if parent != nil {
		f.budget = parent.budget
	} else {
		f.budget = &budget{start: now}
	}
	return f
}

// allow decides a retry after err for the call owning f. It is taken only if
// this call's policy and those of all enclosing calls allow it at the shared
// count and elapsed time; the sleep is the longest any of them asks for.
// An allowed retry is charged to the budget at once, under the lock, so
// concurrent nested calls cannot overspend it. retries is the count after
// the decision.
func (f *frame) allow(err error, now time.Time) (sleep time.Duration, retries int, ok bool) {
	b := f.budget
	b.mu.Lock()
	defer b.mu.Unlock()
	elapsed := now.Sub(b.start)
	for fr := f; fr != nil; fr = fr.parent {
		d, allowed := ask(fr.policy, err, b.retries, elapsed)
		if !allowed {
			return 0, b.retries, false
		}
		sleep = max(sleep, d)
	}
	b.retries++
	return sleep, b.retries, true
}
