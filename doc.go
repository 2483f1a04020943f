// Package curator is Apache Curator's framework and recipes for Go, on
// ZooKeeper: this package holds no code, only this map of the module.
//
// The znodes the recipes write have Curator 5's names, modes and data, so Go
// and Java processes contend correctly on one path (docs/migration-from-curator.md
// maps Curator's API to this module's, and lists what is not provided yet).
//
// # Packages
//
//   - framework: the client. Connect, Curator's operations with their
//     modifiers (protected create, guaranteed delete, containers, TTL,
//     transactions with results, compression, idempotent writes), all
//     retried under a retry policy; persistent and recursive watches (Watch),
//     Sync, namespace views and ensemble tracking.
//   - connstate: connection states (Connected, Suspended, Reconnected, Lost,
//     ReadOnly), the error policies that decide when a hold ends, and a
//     circuit-breaking listener.
//   - retry: Curator's retry policies, and Do to run an operation under one.
//   - recipes/mutex: a reentrant mutex (InterProcessMutex), with fencing
//     tokens, revocation and local hand-over.
//   - recipes/rwlock: a read/write lock (InterProcessReadWriteLock).
//   - recipes/semaphore: a counting semaphore with leases, in the V1 layout
//     or Curator's InterProcessSemaphoreV2 layout.
//   - recipes/shared: SharedValue and SharedCount (a semaphore may take its
//     maximum from a count).
//   - recipes/leader: leader election, LeaderLatch's or LeaderSelector's layout.
//   - recipes/multilock: several locks taken all or nothing (InterProcessMultiLock).
//   - recipes/cache: CuratorCache, TreeCache, PathChildrenCache and NodeCache,
//     on one persistent recursive watch.
//   - recipes/node: PersistentNode and PersistentTtlNode, never wrong about
//     who owns the node.
//   - recipes/group: GroupMember, with a membership change stream.
//   - recipes/discovery: curator-x-discovery's service discovery, its JSON
//     byte for byte.
//   - recipes/barrier: DistributedBarrier and DistributedDoubleBarrier.
//   - recipes/atomic: DistributedAtomicLong, Integer and Value.
//   - recipes/locking: the lock loop every lock recipe runs, for writing
//     new lock-shaped recipes.
//   - zktest: real ZooKeeper servers, ensembles and a fault proxy for tests.
//
// The gocurator command (go install github.com/gocurator/curator/cmd/gocurator@latest)
// shows who holds and who waits for every lock on a path and runs a command
// only while a lock is held; it lives in a module of its own, with the
// other tools, so that this module's go.mod carries only the library's
// dependencies.
//
// # A first lock
//
//	c, err := framework.Connect(ctx, "127.0.0.1:2181", framework.WithNamespace("app"))
//	if err != nil {
//		return err
//	}
//	defer c.Close()
//
//	m := mutex.New(c, "/locks/orders")
//	if err := m.Acquire(ctx); err != nil { // the ctx deadline is the acquire timeout
//		return err // nothing is held and no node is left behind
//	}
//	defer m.Release(context.Background())
//
//	select {
//	case <-m.Done(): // the hold ended: connection suspended or session lost
//		return m.Err() // mutex.ErrLockLost
//	case <-work:
//	}
//
// docs/getting-started.md goes from nothing to this lock, server included.
package curator
