// Command leader shows leader election as a singleton job: several
// candidates (one ZooKeeper session each) campaign on one path, only the
// leader runs the job, and every write of the job is fenced, so that
// ZooKeeper itself refuses the write of a leader that was deposed. Each
// leader resigns after a few runs, and the next candidate takes over.
//
//	go run ./examples/leader -zk 127.0.0.1:2181
package main

import (
	"context"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/leader"
)

var start = time.Now()

func say(format string, args ...any) {
	fmt.Printf("%6.3fs  %s\n", time.Since(start).Seconds(), fmt.Sprintf(format, args...))
}

func main() {
	zkAddr := flag.String("zk", "127.0.0.1:2181", "ZooKeeper connect string")
	path := flag.String("path", "/examples/leader", "election path")
	candidates := flag.Int("candidates", 3, "candidates, one client each")
	terms := flag.Int("terms", 6, "terms to run before stopping")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, *zkAddr, *path, *candidates, *terms); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, zkAddr, path string, candidates, terms int) error {
	admin, err := framework.Connect(ctx, zkAddr)
	if err != nil {
		return err
	}
	defer admin.Close()
	// The job's output: the highest token that wrote it, and a counter.
	state := path + "-state"
	if _, err := admin.Create(ctx, state, make([]byte, 16), framework.CreatingParents()); err != nil && !errors.Is(err, zk.ErrNodeExists) {
		return err
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu   sync.Mutex
		left = terms
		wg   sync.WaitGroup
	)
	for i := range candidates {
		c, err := framework.Connect(ctx, zkAddr)
		if err != nil {
			return err
		}
		defer c.Close()
		id := fmt.Sprintf("candidate-%d", i)
		e := leader.New(c, path, leader.WithID(id))
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := e.Run(ctx, func(ctx context.Context) error {
				term := leader.FromContext(ctx)
				say("%s leads (token %d)", id, term.Token())
				for n := 0; n < 3; n++ {
					if err := job(ctx, c, term, state); err != nil {
						say("%s: write refused: %v", id, err)
						return nil
					}
					select {
					case <-ctx.Done():
						say("%s: leadership lost: %v", id, term.Err())
						return nil
					case <-time.After(200 * time.Millisecond):
					}
				}
				say("%s resigns", id)
				mu.Lock()
				left--
				if left == 0 {
					cancel()
				}
				mu.Unlock()
				return nil // Run resigns, then campaigns again
			})
			if err != nil && !errors.Is(err, context.Canceled) {
				say("%s: %v", id, err)
			}
		}()
	}
	wg.Wait()
	data, _, err := admin.Get(context.Background(), state)
	if err != nil {
		return err
	}
	say("done: %d fenced writes, last by token %d", binary.BigEndian.Uint64(data[8:]), binary.BigEndian.Uint64(data[:8]))
	return nil
}

// job is one run of the singleton job: read the state and write it back,
// with our token and one more run, fenced by the term (refused once our
// node is gone, so a deposed leader cannot write) and by the version read
// (refused if anyone wrote in between). The token only grows: a resource
// outside ZooKeeper would refuse any token lower than the highest it saw.
func job(ctx context.Context, c *framework.Client, term *leader.Term, state string) error {
	data, st, err := c.Get(ctx, state)
	if err != nil {
		return err
	}
	if last := int64(binary.BigEndian.Uint64(data[:8])); last > term.Token() {
		return fmt.Errorf("a newer leader (token %d) wrote already", last)
	}
	next := binary.BigEndian.AppendUint64(nil, uint64(term.Token()))
	next = binary.BigEndian.AppendUint64(next, binary.BigEndian.Uint64(data[8:])+1)
	_, err = term.FencedMulti(ctx, framework.SetOp(state, next, st.Version))
	return err
}
