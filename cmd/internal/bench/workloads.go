package bench

import (
	"context"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/recipes/mutex"
)

func init() {
	register(Workload{Name: Raw, Impl: ImplRaw, New: rawCycle})
	register(Workload{Name: Mutex, Impl: ImplOurs, New: mutexCycle})
	// go-zookeeper's only lock is exclusive: the table compares our write
	// lock with this mutex row too.
	register(Workload{Name: Mutex, Impl: ImplZKLock, Peer: true, New: zkLockCycle})
}

// rawData is written into raw nodes: as long as the local IP our mutex
// writes by default.
var rawData = []byte("127.0.0.1")

// rawCycle is the physical floor of a lock: the requests a lock cannot do
// without (create EPHEMERAL_SEQUENTIAL + getChildren, then delete) made
// with go-zookeeper directly, no protected name and no waiting.
func rawCycle(ctx context.Context, w *Worker) (Locker, error) {
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
			_, _, err = conn.Children(w.Path)
			return err
		},
		Release: func(context.Context) error { return conn.Delete(node, -1) },
	}, nil
}

// mutexCycle is our InterProcessMutex.
func mutexCycle(ctx context.Context, w *Worker) (Locker, error) {
	c, err := w.Client(ctx)
	if err != nil {
		return Locker{}, err
	}
	m := mutex.New(c, w.Path)
	return Locker{Acquire: m.Acquire, Release: m.Release}, nil
}

// zkLockCycle is go-zookeeper's own lock recipe (no context support).
func zkLockCycle(ctx context.Context, w *Worker) (Locker, error) {
	conn, err := w.Conn(ctx)
	if err != nil {
		return Locker{}, err
	}
	l := zk.NewLock(conn, w.Path, zk.WorldACL(zk.PermAll))
	return Locker{
		Acquire: func(context.Context) error { return l.Lock() },
		Release: func(context.Context) error { return l.Unlock() },
	}, nil
}
