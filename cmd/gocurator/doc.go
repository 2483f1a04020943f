// Command gocurator is a recipe-aware ZooKeeper tool for operators: it
// shows who holds and who waits for the locks, read/write locks,
// semaphores and elections on an ensemble, in order, tied to their owner
// sessions and hosts, and runs a command only while a lock is held.
//
//	go install github.com/gocurator/curator/cmd/gocurator@latest
//
//	gocurator --zk HOST:PORT[/chroot] locks ls PATH [-r] [--json]
//	gocurator --zk ... locks watch PATH
//	gocurator --zk ... exec PATH [-n N [--v2]] -- CMD ARGS...
//	gocurator --zk ... semaphore leases PATH [--max N | --count PATH]
//	gocurator --zk ... leader show PATH
//	gocurator --zk ... orphans PATH
//	gocurator --zk ... revoke NODE
//	gocurator --zk ... break NODE --force
//
// Layouts are recognised by package cmd/internal/inspect. docs/cli.md shows
// every command with output from a real run.
package main
