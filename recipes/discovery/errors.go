package discovery

import (
	"errors"

	"github.com/gocurator/curator/framework"
)

// Errors of the package, matched with errors.Is.
var (
	// ErrMalformed is wrapped by the error of an instance node whose data is
	// not Curator's ServiceInstance JSON: not JSON, a missing or null
	// "name" or "id", a field of the wrong type, an unknown service type.
	// Reads skip such nodes (and report them, see WithLogger); decoding
	// one returns it.
	ErrMalformed = errors.New("curator: malformed service instance")
	// ErrInvalidInstance is returned by Register and Update for an instance
	// that cannot be registered: an empty or path-unsafe name or id, an
	// unknown service type, a payload that is not JSON or that Curator
	// cannot read back (a bare JSON array: Jackson expects its type tag).
	ErrInvalidInstance = errors.New("curator: invalid service instance")
	// ErrTooLarge is returned by Register and Update when the instance's
	// JSON is larger than the limit (WithMaxInstanceSize; the server's
	// jute.maxbuffer by default); nothing is written.
	ErrTooLarge = errors.New("curator: service instance too large")
	// ErrNotFound is returned by Instance when the service has no instance
	// with that id.
	ErrNotFound = errors.New("curator: service instance not found")
	// ErrNotRegistered is returned by Update for an instance this
	// Discovery has not registered (or has unregistered).
	ErrNotRegistered = errors.New("curator: service instance not registered here")
	// ErrNoInstances is returned by a Provider when no instance passes its
	// filters.
	ErrNoInstances = errors.New("curator: no service instance available")
	// ErrClosed is returned by the calls of a closed Discovery, ServiceCache
	// or Provider.
	ErrClosed = errors.New("curator: service discovery closed")
	// ErrInvalidPath is framework.ErrInvalidPath: the base path is not a
	// valid ZooKeeper path.
	ErrInvalidPath = framework.ErrInvalidPath
	// ErrNilClient is framework.ErrNilClient: New was given a nil client.
	ErrNilClient = framework.ErrNilClient
	// ErrNilHandle is framework.ErrNilHandle, returned by the calls of a
	// nil *Discovery, *ServiceCache or *Provider.
	ErrNilHandle = framework.ErrNilHandle
)

// Lifecycle errors, added separately so that the regression tests compile
// before the fixes land.
var (
	// ErrAlreadyStarted is returned by a second Start of a ServiceCache or
	// Provider that is running or starting; the running one is not
	// touched.
	ErrAlreadyStarted = errors.New("curator: service cache already started")
	// ErrNilSource is returned by the picks of a Provider made by
	// NewProvider with a nil InstanceSource.
	ErrNilSource = errors.New("curator: provider has no instance source")
)
