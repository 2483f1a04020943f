package barrier

import (
	"errors"

	"github.com/gocurator/curator/framework"
)

// Errors, matched with errors.Is.
var (
	// ErrMemberLost is returned by Enter when the member's node vanished
	// while it waited: its session expired, or someone deleted it. Err
	// (and then Leave) wraps it once an entered member's place was lost
	// with the connection, per the client's ErrorPolicy.
	ErrMemberLost = errors.New("curator: barrier member node lost")
	// ErrNotEntered is returned by Leave on a Double that has not entered.
	ErrNotEntered = errors.New("curator: double barrier not entered")
	// ErrInvalidCount is returned for a Double made with n < 1.
	ErrInvalidCount = errors.New("curator: double barrier member count must be at least 1")
	// ErrNilClient is framework.ErrNilClient.
	ErrNilClient = framework.ErrNilClient
	// ErrInvalidPath is framework.ErrInvalidPath: a path ZooKeeper would
	// reject, or the root.
	ErrInvalidPath = framework.ErrInvalidPath
	// ErrNilHandle is framework.ErrNilHandle, returned by the calls of a
	// nil *Barrier or *Double.
	ErrNilHandle = framework.ErrNilHandle
	// ErrLayoutMismatch is framework.ErrLayoutMismatch: a Barrier found a
	// double barrier's layout (member nodes, the ready node) at its path.
	ErrLayoutMismatch = framework.ErrLayoutMismatch
)

// validate checks a barrier's client and path.
func validate(c *framework.Client, path string) error {
	switch {
	case c == nil:
		return ErrNilClient
	case framework.ValidatePath(path) != nil:
		return framework.ValidatePath(path)
	case path == "/":
		return errors.Join(ErrInvalidPath, errors.New("a barrier cannot live at the root"))
	}
	return nil
}
