package bench

import (
	"cmp"
	"context"
	"errors"
	"slices"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/locking"
)

// Diagnostic workloads take the uncontended mutex apart, one cost at a
// time, from the raw floor to the full recipe. They are not in Names; the
// command runs them with -diagnose.
var diagnostics = []Workload{
	{Name: "diag", Impl: "raw: create + children, delete", New: rawCycle},
	{Name: "diag", Impl: "raw + exists in parallel with children", New: rawExistsCycle},
	{Name: "diag", Impl: "framework: create + children, delete", New: frameworkCycle(false, false)},
	{Name: "diag", Impl: "framework: protected create + children, guaranteed delete", New: frameworkCycle(true, false)},
	{Name: "diag", Impl: "framework: protected create + children||exists, guaranteed delete", New: frameworkCycle(true, true)},
	{Name: "diag", Impl: "mutex (recipe)", New: mutexCycle},
	{Name: "diag", Impl: "framework full as above, ctx without deadline", New: noDeadline(frameworkCycle(true, true))},
	{Name: "diag", Impl: "mutex, ctx without deadline", New: noDeadline(mutexCycle)},
}

// noDeadline runs a workload with context.Background() instead of the
// loop's per-acquire deadline: the framework then runs each request on the
// caller's goroutine instead of handing it to a goroutine of its own that
// the caller waits for alongside ctx.Done().
func noDeadline(newLocker func(context.Context, *Worker) (Locker, error)) func(context.Context, *Worker) (Locker, error) {
	return func(ctx context.Context, w *Worker) (Locker, error) {
		l, err := newLocker(ctx, w)
		if err != nil {
			return l, err
		}
		bg := context.Background()
		return Locker{
			Acquire: func(context.Context) error { return l.Acquire(bg) },
			Release: func(context.Context) error { return l.Release(bg) },
		}, nil
	}
}

func init() {
	register(Workload{Name: Mutex, Impl: ImplSketch, Diagnostic: true, New: sketchCycle})
}

// Diagnostics returns the diagnostic workloads in order.
func Diagnostics() []Workload { return append([]Workload{}, diagnostics...) }

// rawExistsCycle is the raw floor plus the exists of our own node that the
// lock loop sends next to its first getChildren.
func rawExistsCycle(ctx context.Context, w *Worker) (Locker, error) {
	conn, err := w.Conn(ctx)
	if err != nil {
		return Locker{}, err
	}
	acl := zk.WorldACL(zk.PermAll)
	var node string
	return Locker{
		Acquire: func(context.Context) (err error) {
			node, err = conn.Create(w.Path+"/lock-", rawData, zk.FlagEphemeral|zk.FlagSequence, acl)
			if err != nil {
				return err
			}
			done := make(chan error, 1)
			go func() {
				_, _, err := conn.Exists(node)
				done <- err
			}()
			_, _, err = conn.Children(w.Path)
			return errors.Join(err, <-done)
		},
		Release: func(context.Context) error { return conn.Delete(node, -1) },
	}, nil
}

// frameworkCycle makes the raw requests through our framework client;
// with protected, the create and delete are the lock loop's (protected,
// parent containers; guaranteed, quiet); with exists, our node's Stat is
// read next to the listing as the loop does.
func frameworkCycle(protected, exists bool) func(context.Context, *Worker) (Locker, error) {
	return func(ctx context.Context, w *Worker) (Locker, error) {
		c, err := w.Client(ctx)
		if err != nil {
			return Locker{}, err
		}
		var node string
		createOpts := []framework.CreateOption{framework.WithMode(framework.EphemeralSequential)}
		var deleteOpts []framework.DeleteOption
		if protected {
			createOpts = append(createOpts, framework.Protected(), framework.CreatingParentContainers())
			deleteOpts = append(deleteOpts, framework.Guaranteed(), framework.Quietly())
		}
		return Locker{
			Acquire: func(ctx context.Context) (err error) {
				node, err = c.Create(ctx, framework.JoinPath(w.Path, "lock-"), nil, createOpts...)
				if err != nil {
					return err
				}
				var done chan error
				if exists {
					done = make(chan error, 1)
					go func() {
						_, err := c.Exists(ctx, node)
						done <- err
					}()
				}
				_, _, err = c.Children(ctx, w.Path)
				if done != nil {
					err = errors.Join(err, <-done)
				}
				return err
			},
			Release: func(ctx context.Context) error { return c.Delete(ctx, node, deleteOpts...) },
		}, nil
	}
}

// sketchCycle is not a lock to use: it is the mutex protocol (create,
// getChildren, watch the node just ahead) minus the read our loop makes
// after the watch fires. When the node ahead was the first, its deletion is
// taken as the grant, so a hand-over costs the holder's delete and the
// notification only. It shows what the lock loop's hand-over read costs
// under contention. No protection, no connection-loss handling.
func sketchCycle(ctx context.Context, w *Worker) (Locker, error) {
	conn, err := w.Conn(ctx)
	if err != nil {
		return Locker{}, err
	}
	acl := zk.WorldACL(zk.PermAll)
	var node string
	seqOf := func(name string) int32 {
		s, _ := locking.Sequence(name, "lock-")
		return s
	}
	return Locker{
		Acquire: func(ctx context.Context) (err error) {
			node, err = conn.Create(w.Path+"/lock-", rawData, zk.FlagEphemeral|zk.FlagSequence, acl)
			if err != nil {
				return err
			}
			_, own := framework.SplitPath(node)
			for {
				children, _, err := conn.Children(w.Path)
				if err != nil {
					return err
				}
				slices.SortFunc(children, func(a, b string) int { return cmp.Compare(seqOf(a), seqOf(b)) })
				i := slices.Index(children, own)
				if i < 0 {
					return errors.New("sketch: own node gone")
				}
				if i == 0 {
					return nil
				}
				ok, _, ch, err := conn.ExistsW(w.Path + "/" + children[i-1])
				if err != nil {
					return err
				}
				if !ok {
					continue
				}
				select {
				case ev := <-ch:
					if ev.Type == zk.EventNodeDeleted && i == 1 {
						return nil
					}
				case <-ctx.Done():
					_ = conn.Delete(node, -1)
					return ctx.Err()
				}
			}
		},
		Release: func(context.Context) error { return conn.Delete(node, -1) },
	}, nil
}
