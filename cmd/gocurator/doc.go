// Command gocurator is a recipe-aware ZooKeeper tool for operators: it
// shows who holds and who waits for the locks, read/write locks,
// semaphores and elections on an ensemble, in order, tied to their owner
// sessions and hosts, and runs a command only while a lock is held.
//
//	go install github.com/gocurator/curator/cmd/gocurator@latest
//
//	gocurator --zk HOST:PORT[/chroot] locks ls PATH [-r] [--json]
//	gocurator --zk ... locks watch PATH
//	gocurator --zk ... exec PATH [-n N [--v2]] [--wait D [-E STATUS]] -- CMD ARGS...
//	gocurator --zk ... elect exec PATH [--id ID] -- CMD ARGS...
//	gocurator --zk ... semaphore leases PATH [--max N | --count PATH]
//	gocurator --zk ... leader show PATH
//	gocurator --zk ... orphans PATH
//	gocurator --zk ... revoke NODE
//	gocurator --zk ... break NODE --force
//	gocurator --zk ... ls [-R] PATH
//	gocurator --zk ... get [-s] [--raw] PATH
//	gocurator --zk ... stat PATH
//	gocurator --zk ... group ls PATH
//	gocurator --zk ... atomic get PATH [--int]
//	gocurator --zk ... atomic rm PATH
//	gocurator --zk ... tree watch PATH [--updates N] [--for D]
//	gocurator version
//
// Exit statuses (docs/cli.md tables them, status.go defines them): 0 on
// success, 1 on failure, 2 for a command line that could not be
// understood (nothing is run), 65 when PATH is not the kind of recipe
// the command needs (exec, locks ls, group ls, atomic rm, ...: the line
// says what is there), 69 when no server answers, 75 when exec --wait ends first (-E
// picks another), 126 and 127 as sh for a CMD that cannot run or is not
// found; otherwise exec exits with CMD's own status.
//
// ls, get and stat exit 1 for a missing node. Layouts are recognised by
// package cmd/internal/inspect (Identify: one classifier for every command). docs/cli.md shows
// every command with output from a real run.
package main
