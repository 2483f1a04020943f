package leader_test

import (
	"context"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/leader"
	"github.com/gocurator/curator/zktest"
)

// handOvers is the number of forced hand-overs of TestExactlyOneLeader;
// make leader-stress runs the 500.
var handOvers = flag.Int("leader.handovers", 40, "forced hand-overs in TestExactlyOneLeader")

// win is a participant's new term, reported to the test.
type win struct {
	slot int // the client slot of the participant
	id   string
	term *leader.Term
	c    *framework.Client
}

// Exactly one leader at a time: 8 participants on 4 clients, leaders
// deposed by resigning, by losing their connection (the proxy cuts it) and
// by closing their client. Each new leader proves, on the server, that the
// previous term's node is gone before it acts (the marker names the node
// of the term that wrote it, and is written by a fenced multi with a
// version check), that its token is greater than every earlier one, and
// that the previous term's fenced write is now refused.
func TestExactlyOneLeader(t *testing.T) {
	t.Parallel()
	ns := testkit.Unique(t)
	// testkit.Ctx's 30 s would end the run part-way at the 500
	// hand-overs (make leader-stress): the budget grows with the count.
	ctx, cancel := context.WithTimeout(context.Background(), testkit.Deadline+time.Duration(*handOvers)*2*time.Second)
	defer cancel()
	admin := testkit.Connect(t, zkAddr, ns)
	if _, err := admin.Create(ctx, "/marker", []byte{}); err != nil {
		t.Fatal(err)
	}

	const clients, perClient = 4, 2
	proxies := make([]*zktest.Proxy, clients)
	wins := make(chan win)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	slots := make([]*framework.Client, clients)
	start := func(slot int) {
		c := testkit.Connect(t, proxies[slot].Addr(), ns, framework.WithSessionTimeout(2*time.Second))
		slots[slot] = c
		for p := 0; p < perClient; p++ {
			id := fmt.Sprintf("c%d-p%d", slot, p)
			e := leader.New(c, "/election", leader.WithID(id))
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					term, err := e.Campaign(ctx)
					if err != nil {
						if ctx.Err() != nil || errors.Is(err, framework.ErrClosed) {
							return
						}
						continue // session lost while waiting: campaign again
					}
					select {
					case wins <- win{slot, id, term, c}:
					case <-ctx.Done():
						_ = term.Resign(context.Background())
						return
					}
					select {
					case <-term.Done():
					case <-ctx.Done():
						return
					}
				}
			}()
		}
	}
	for i := range proxies {
		proxies[i] = zktest.NewProxy(t, zkAddr)
		start(i)
	}

	var (
		lastToken int64
		prev      *leader.Term
		prevCheck framework.Op // the previous term's check, taken while it led
		kinds     = map[string]int{}
	)
	for i := 0; i < *handOvers; i++ {
		var w win
		select {
		case w = <-wins:
		case <-time.After(testkit.Deadline):
			t.Fatalf("hand-over %d: no new leader", i)
		}
		// The previous term's node must be gone: read the marker, check
		// the node it names, and write ours only if nobody wrote between.
		data, st, err := admin.Get(ctx, "/marker")
		if err != nil {
			t.Fatal(err)
		}
		if len(data) > 8 {
			if pst, err := admin.Exists(ctx, string(data[8:])); err != nil || pst != nil {
				t.Fatalf("hand-over %d: %s leads while the previous term's node %s exists (%v)", i, w.id, data[8:], err)
			}
			if last := int64(binary.BigEndian.Uint64(data[:8])); w.term.Token() <= last {
				t.Fatalf("hand-over %d: token %d after %d", i, w.term.Token(), last)
			}
		}
		if w.term.Token() <= lastToken {
			t.Fatalf("hand-over %d: token %d after %d", i, w.term.Token(), lastToken)
		}
		lastToken = w.term.Token()
		mark := binary.BigEndian.AppendUint64(nil, uint64(w.term.Token()))
		mark = append(mark, w.term.Node()...)
		if _, err := w.term.FencedMulti(ctx, framework.SetOp("/marker", mark, st.Version)); err != nil {
			t.Fatalf("hand-over %d: fenced write of the new leader %s: %v", i, w.id, err)
		}
		// The previous term may not write any more: its FencedMulti fails
		// (at once, the term having ended), and the server itself refuses
		// a write behind the check it took while it led.
		if prev != nil {
			if _, err := prev.FencedMulti(ctx, framework.SetOp("/marker", []byte("stale"), -1)); err == nil {
				t.Fatalf("hand-over %d: the previous term's fenced write was applied", i)
			}
			if _, err := admin.Multi(ctx, prevCheck, framework.SetOp("/marker", []byte("stale"), -1)); !errors.Is(err, zk.ErrNoNode) {
				t.Fatalf("hand-over %d: a write behind the previous term's check: %v, want zk.ErrNoNode", i, err)
			}
		}
		prev = w.term
		if prevCheck, err = w.term.CheckOp(); err != nil {
			t.Fatalf("hand-over %d: CheckOp of the leader: %v", i, err)
		}
		// Depose the leader.
		switch i % 10 {
		default:
			kinds["resign"]++
			if err := w.term.Resign(ctx); err != nil {
				t.Fatal(err)
			}
		case 3, 7:
			kinds["cut"]++
			proxies[w.slot].Cut()
			testkit.WaitClosed(t, w.term.Done(), "the cut leader's term to end")
			if !errors.Is(w.term.Err(), leader.ErrSuspended) && !errors.Is(w.term.Err(), leader.ErrSessionLost) {
				t.Fatalf("cut leader's Err = %v", w.term.Err())
			}
			proxies[w.slot].Restore()
		case 9:
			kinds["close"]++
			if err := w.c.Close(); err != nil {
				t.Fatal(err)
			}
			if !errors.Is(w.term.Err(), framework.ErrClosed) {
				t.Fatalf("closed leader's Err = %v", w.term.Err())
			}
			start(w.slot)
		}
	}
	t.Logf("%d hand-overs: %v", *handOvers, kinds)
	cancel()
	wg.Wait()
	if prev != nil {
		_ = prev.Resign(context.Background())
	}
	for _, c := range slots {
		_ = c.Close()
	}
	testkit.Eventually(t, "no node left", func() bool { return len(testkit.Children(t, admin, "/election")) == 0 })
}
