package framework_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/gocurator/curator/framework"
)

func ExampleClient_Watch() {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	c, err := framework.Connect(ctx, os.Getenv("GOCURATOR_ZK"), framework.WithNamespace("example-watch"))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	// One persistent-recursive watch for /config and everything below it.
	w, err := c.Watch(ctx, "/config", framework.Recursive())
	if err != nil {
		log.Fatal(err)
	}
	defer w.Close() // removes the server's watch

	// Changes, made one at a time here so that each shows as its own
	// event (a consumer slower than the changes gets a path's last one).
	changes := []func() error{
		func() error {
			_, err := c.Create(ctx, "/config/db", []byte("a"), framework.CreatingParents())
			return err
		},
		func() error { _, err := c.Set(ctx, "/config/db", []byte("b"), -1); return err },
		func() error { return c.Delete(ctx, "/config/db") },
	}
	if err := changes[0](); err != nil {
		log.Fatal(err)
	}
	done := 1
	for ev := range w.Events() {
		if ev.Type == framework.WatchResync {
			continue // reconnected: changes may have been missed; read again
		}
		fmt.Println(ev.Type, ev.Path)
		if ev.Path != "/config/db" {
			continue
		}
		if done == len(changes) {
			break
		}
		if err := changes[done](); err != nil {
			log.Fatal(err)
		}
		done++
	}
	_ = c.Delete(ctx, "/config")
	// Output:
	// created /config
	// created /config/db
	// data-changed /config/db
	// deleted /config/db
}
