// Package inspect recognises lock recipes from what ZooKeeper shows of them:
// it reads a tree of znodes (Load), tells which directories are mutexes,
// read/write locks, semaphores (V1 and Curator's V2) and leader latches by
// the names of their children (Find), orders each one's participants into
// holders and waiters as the recipes decide, and ties each participant to
// its owner session and whether that session is still connected (Sessions,
// from the servers' "cons" four-letter word).
//
// It is the logic behind the gocurator command; it knows the layouts of
// Curator (and this module's recipes, which share them), kazoo ("__lock__",
// "__rlock__") and go-zookeeper ("_c_<32 hex>-lock-"). Classification is
// pure: it works on Znode values, so it is tested without a server.
package inspect
