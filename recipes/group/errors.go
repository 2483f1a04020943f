package group

import (
	"errors"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/node"
)

// Errors of the package, matched with errors.Is.
var (
	// ErrInvalidID is returned by Start for a member id that is not one
	// node name: empty, ".", "..", or with a "/".
	ErrInvalidID = errors.New("curator: invalid member id")
	// ErrOwnedByOtherSession is node.ErrOwnedByOtherSession: another
	// session holds a member node with this id.
	ErrOwnedByOtherSession = node.ErrOwnedByOtherSession
	// ErrClosed is returned by Start and SetPayload after Close.
	ErrClosed = errors.New("curator: group member closed")
	// ErrAlreadyStarted is returned by a second Start of a running member.
	ErrAlreadyStarted = node.ErrAlreadyStarted
	// ErrNilHandle is framework.ErrNilHandle, returned by the calls of a
	// nil *Member that would act on ZooKeeper.
	ErrNilHandle = framework.ErrNilHandle
	// ErrNilClient is framework.ErrNilClient: New was given a nil client.
	ErrNilClient = framework.ErrNilClient
	// ErrInvalidPath is framework.ErrInvalidPath.
	ErrInvalidPath = framework.ErrInvalidPath
)
