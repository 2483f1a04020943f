// Package inspect recognises lock recipes from what ZooKeeper shows of them:
// it reads a tree of znodes (Load), tells which directories are mutexes,
// read/write locks, semaphores (V1 and Curator's V2) and leader latches by
// the names of their children (Find), orders each one's participants into
// holders and waiters as the recipes decide, and ties each participant to
// its owner session and whether that session is still connected (Sessions,
// from the servers' "cons" four-letter word).
//
// Identify is the one classifier of layouts every gocurator command asks:
// beyond the locks, it names groups, services and their discovery base
// paths, counters written by Go handles, double barriers and queues, and
// what each child is in them; Locate says the same of one path, a recipe
// or one of a recipe's nodes. A new layout is one more recogniser in its
// table.
//
// It is the logic behind the gocurator command; it knows the layouts of
// Curator (and this module's recipes, which share them), kazoo ("__lock__",
// "__rlock__") and go-zookeeper ("_c_<32 hex>-lock-"). Classification is
// pure: it works on Znode values, so it is tested without a server.
package inspect
