package framework_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"

	"github.com/gocurator/curator/framework"
)

// Two applications share one session through namespace views, as with
// Curator's usingNamespace.
func ExampleClient_WithNamespace() {
	ctx := context.Background()
	c, err := framework.Connect(ctx, os.Getenv("GOCURATOR_ZK"))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close() // ends the session of the client and of its views

	orders, err := c.WithNamespace("example-view/orders")
	if err != nil {
		log.Fatal(err)
	}
	billing, err := c.WithNamespace("example-view/billing")
	if err != nil {
		log.Fatal(err)
	}
	for _, v := range []*framework.Client{orders, billing} {
		if _, err := v.Create(ctx, "/worker", []byte(v.Namespace()), framework.WithMode(framework.Ephemeral)); err != nil {
			log.Fatal(err)
		}
	}
	data, st, err := c.Get(ctx, "/example-view/billing/worker")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s, same session: %v\n", data, st.EphemeralOwner == billing.SessionID())
	// The session is the client's: a view cannot close it.
	fmt.Println(errors.Is(orders.Close(), framework.ErrCloseView))
	// Output:
	// example-view/billing, same session: true
	// true
}
