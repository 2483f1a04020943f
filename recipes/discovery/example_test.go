package discovery_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/discovery"
)

// The examples connect to the servers in $GOCURATOR_ZK, as the gocurator
// CLI does (the tests' TestMain sets it to the package's test server).

// A Go service registers itself under Spring Cloud Zookeeper's default base
// path; another process calls it through a provider.
func Example() {
	ctx := context.Background()

	// The service.
	server, err := framework.Connect(ctx, os.Getenv("GOCURATOR_ZK"), framework.WithNamespace("example-discovery"))
	if err != nil {
		log.Fatal(err)
	}
	defer server.Close()
	reg := discovery.New(server, "/services")
	defer reg.Close(ctx)
	err = reg.Register(ctx, discovery.Instance{
		Name:    "orders",
		ID:      "orders-1",
		Address: "10.0.0.7",
		Port:    discovery.Int(8080),
		URISpec: discovery.DefaultURISpec(),
		Payload: discovery.SpringCloudPayload("application-1", "orders", map[string]string{"instance_status": "UP"}),
	})
	if err != nil {
		log.Fatal(err)
	}

	// A client of the service, in another process.
	client, err := framework.Connect(ctx, os.Getenv("GOCURATOR_ZK"), framework.WithNamespace("example-discovery"))
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	d := discovery.New(client, "/services")
	defer d.Close(ctx)
	orders := d.Provider("orders")
	if err := orders.Start(ctx); err != nil {
		log.Fatal(err)
	}
	inst, err := orders.Instance()
	if err != nil {
		log.Fatal(err)
	}
	meta, _ := inst.ZookeeperInstance()
	fmt.Println("calling", inst.URI(nil), "status", meta.Metadata["instance_status"])
	// Output: calling http://10.0.0.7:8080 status UP
}

func ExampleInstance_MarshalJSON() {
	inst := discovery.Instance{Name: "orders", ID: "o-1", Address: "10.0.0.7", Port: discovery.Int(8080),
		RegistrationTimeUTC: 1700000000000, ServiceType: discovery.Dynamic, URISpec: discovery.MustParseURISpec("{scheme}://{address}:{port}")}
	b, _ := inst.MarshalJSON()
	fmt.Println(string(b))
	// Output:
	// {"name":"orders","id":"o-1","address":"10.0.0.7","port":8080,"sslPort":null,"payload":null,"registrationTimeUTC":1700000000000,"serviceType":"DYNAMIC","uriSpec":{"parts":[{"value":"scheme","variable":true},{"value":"://","variable":false},{"value":"address","variable":true},{"value":":","variable":false},{"value":"port","variable":true}]}}
}

func ExampleNewProvider() {
	instances := listOf(
		discovery.Instance{Name: "svc", ID: "a"},
		discovery.Instance{Name: "svc", ID: "b", Enabled: discovery.Bool(false)},
		discovery.Instance{Name: "svc", ID: "c"},
	)
	p := discovery.NewProvider(instances, discovery.WithStrategy(discovery.RoundRobin()))
	for range 3 {
		inst, _ := p.Instance()
		fmt.Print(inst.ID, " ")
	}
	// Two errors take an instance out for 30s (Curator's DownInstancePolicy).
	a, _ := p.Instance()
	p.NoteError(a)
	p.NoteError(a)
	fmt.Println("| after two errors of", a.ID+":", len(p.Instances()), "instance offered")
	// Output: a c a | after two errors of c: 1 instance offered
}

func ExampleParseURISpec() {
	spec, err := discovery.ParseURISpec("{scheme}://{address}:{ssl-port}/api/{version}")
	if err != nil {
		log.Fatal(err)
	}
	inst := discovery.Instance{Address: "10.0.0.7", SSLPort: discovery.Int(8443)}
	fmt.Println(spec.Build(&inst, map[string]any{"version": "v2"}))
	// Output: https://10.0.0.7:8443/api/v2
}

func ExampleTypedPayload() {
	type weights struct {
		Zone   string `json:"zone"`
		Weight int    `json:"weight"`
	}
	p, _ := discovery.TypedPayload("com.example.Weights", weights{"eu-1", 3})
	fmt.Println(string(p))
	// Output: {"@class":"com.example.Weights","zone":"eu-1","weight":3}
}

func ExampleDiscovery_Cache() {
	ctx := context.Background()
	c, err := framework.Connect(ctx, os.Getenv("GOCURATOR_ZK"), framework.WithNamespace("example-cache"))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	d := discovery.New(c, "/services")
	defer d.Close(ctx)
	cache := d.Cache("billing")
	if err := cache.Start(ctx); err != nil {
		log.Fatal(err)
	}
	changed := make(chan []discovery.Instance, 1)
	cancel := cache.Listen(func(l []discovery.Instance) { changed <- l })
	defer cancel()
	if err := d.Register(ctx, discovery.Instance{Name: "billing", ID: "b-1", Address: "10.0.0.9", Port: discovery.Int(9090)}); err != nil {
		log.Fatal(err)
	}
	now := <-changed
	fmt.Println(len(now), "instance:", now[0].ID)
	// Output: 1 instance: b-1
}

type listOfInstances []discovery.Instance

func (l listOfInstances) Instances() []discovery.Instance { return l }

func listOf(i ...discovery.Instance) discovery.InstanceSource { return listOfInstances(i) }
