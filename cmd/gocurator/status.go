package main

// Exit statuses, as docs/cli.md tables them. A script tells them apart
// without reading stderr; exec passes its command's own status through,
// so a command that exits with one of these numbers is ambiguous: pick
// another with -E (as flock's --conflict-exit-code).
const (
	exitFailure = 1 // the command failed (ZooKeeper said no, the node is not what was asked for)
	exitUsage   = 2 // the command line could not be understood; nothing was run
	// exitLayout: PATH is not the kind the command needs (another
	// recipe's nodes, a participant's node, plain nodes), or exec found
	// participants admitting more holders than -n; nothing was run or
	// deleted.
	exitLayout = 65 // sysexits EX_DATAERR
	// exitNoConnect: no ZooKeeper server answered within --timeout.
	exitNoConnect = 69 // sysexits EX_UNAVAILABLE
	// exitNotAcquired: exec --wait ended before the hold was granted
	// (the default of -E).
	exitNotAcquired = 75  // sysexits EX_TEMPFAIL: try again later
	exitCannotRun   = 126 // CMD was found but could not be run (sh's status)
	exitNotFound    = 127 // CMD was not found (sh's, env's and timeout's status)
	exitInterrupted = 130 // a signal stopped gocurator before CMD ran (128+SIGINT)
)
