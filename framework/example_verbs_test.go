package framework_test

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/framework"
)

// Data written Compressed is gzip on the server; Decompressed reads it back.
func ExampleCompressed() {
	ctx := context.Background()
	c, err := framework.Connect(ctx, os.Getenv("GOCURATOR_ZK"), framework.WithNamespace("example-compressed"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	if _, err := c.Create(ctx, "/config", []byte("level=debug"), framework.Compressed()); err != nil {
		fmt.Println(err)
		return
	}
	defer c.Delete(ctx, "/config")
	raw, _, _ := c.Get(ctx, "/config")
	data, _, _ := c.Get(ctx, "/config", framework.Decompressed())
	fmt.Printf("stored % x...; read %q\n", raw[:2], data)
	// Output: stored 1f 8b...; read "level=debug"
}

// A refused transaction names the operation that failed.
func ExampleClient_Transaction() {
	ctx := context.Background()
	c, err := framework.Connect(ctx, os.Getenv("GOCURATOR_ZK"), framework.WithNamespace("example-transaction"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	_, err = c.Transaction(ctx,
		framework.CreateOp("/a", nil, framework.Persistent),
		framework.CheckOp("/missing", -1),
	)
	var te *framework.TransactionError
	if errors.As(err, &te) {
		for _, r := range te.Results {
			fmt.Println(r.Type, r.Path, r.Err)
		}
	}
	fmt.Println(errors.Is(err, zk.ErrNoNode))
	// Output:
	// CREATE /a curator: rolled back with its transaction
	// CHECK /missing zk: node does not exist
	// true
}

// Idempotent: a write that meets its own effect (here, made on purpose by
// a first call) succeeds.
func ExampleIdempotent() {
	ctx := context.Background()
	c, err := framework.Connect(ctx, os.Getenv("GOCURATOR_ZK"), framework.WithNamespace("example-idempotent"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	for range 2 {
		_, err := c.Create(ctx, "/job", []byte("42"), framework.Idempotent())
		fmt.Println(err)
	}
	st, err := c.Set(ctx, "/job", []byte("43"), 0, framework.Idempotent())
	fmt.Println(st.Version, err)
	st, err = c.Set(ctx, "/job", []byte("43"), 0, framework.Idempotent())
	fmt.Println(st.Version, err)
	fmt.Println(c.Delete(ctx, "/job", framework.Idempotent()), c.Delete(ctx, "/job", framework.Idempotent()))
	// Output:
	// <nil>
	// <nil>
	// 1 <nil>
	// 1 <nil>
	// <nil> <nil>
}
