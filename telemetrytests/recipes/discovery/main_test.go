package discovery_test

import (
	"context"
	"testing"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/discovery"
)

// zkAddr is the package's ZooKeeper server, started by TestMain for every
// test; each test works in a namespace of its own (testkit.Unique).
var zkAddr string

func TestMain(m *testing.M) { testkit.Main(m, &zkAddr) }

// open returns a Discovery on base, closed at the end of the test.
func open(t *testing.T, c *framework.Client, base string, opts ...discovery.Option) *discovery.Discovery {
	t.Helper()
	d := discovery.New(c, base, opts...)
	t.Cleanup(func() { _ = d.Close(context.Background()) })
	return d
}

// instance returns a valid instance of the service name.
func instance(name, id string, port int) discovery.Instance {
	return discovery.Instance{Name: name, ID: id, Address: "10.0.0.1", Port: discovery.Int(port),
		RegistrationTimeUTC: 1700000000000, URISpec: discovery.DefaultURISpec()}
}
