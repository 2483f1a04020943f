package node

import (
	"errors"

	"github.com/gocurator/curator/framework"
)

// Errors of the package, matched with errors.Is.
var (
	// ErrOwnedByOtherSession says the node's path is held by a node of
	// another session: another process registered the same path (the same
	// member id, say). Start returns it rather than adopt that node (unless
	// WaitForOwner); after Start, an Event carries it as the Reason while
	// the Node waits for that node to go.
	ErrOwnedByOtherSession = errors.New("curator: node owned by another session")
	// ErrSessionLost is the Reason of an Event when the session that owned
	// our ephemeral node ended (expired, or declared expired by the
	// client): the node is gone or about to go, and is made again in the
	// new session once it has gone.
	ErrSessionLost = errors.New("curator: session lost")
	// ErrNodeDeleted is the Reason of an Event when our node was deleted
	// by someone else (an operator, a recursive delete of a parent) while
	// our session lived.
	ErrNodeDeleted = errors.New("curator: node deleted")
	// ErrTTLUnsupported is returned by Start for a TTL node when the
	// server refuses TTL nodes: it runs without
	// zookeeper.extendedTypesEnabled=true (or is older than 3.5.3).
	ErrTTLUnsupported = errors.New("curator: server refuses TTL nodes (zookeeper.extendedTypesEnabled is not true)")
	// ErrAlreadyStarted is returned by a second Start of a Node that runs.
	ErrAlreadyStarted = errors.New("curator: node already started")
	// ErrClosed is returned by Start and SetData after Close.
	ErrClosed = errors.New("curator: node closed")
	// ErrNilHandle is framework.ErrNilHandle, returned by the calls of a
	// nil *Node that would act on ZooKeeper.
	ErrNilHandle = framework.ErrNilHandle
	// ErrNilClient is framework.ErrNilClient: New was given a nil client.
	ErrNilClient = framework.ErrNilClient
	// ErrInvalidPath is framework.ErrInvalidPath: a path ZooKeeper would
	// reject, or the root.
	ErrInvalidPath = framework.ErrInvalidPath
	// ErrInvalidOption is framework.ErrInvalidOption: an option out of
	// range, or options that do not go together (a TTL on an ephemeral
	// node, a TTL mode without a TTL).
	ErrInvalidOption = framework.ErrInvalidOption
)
