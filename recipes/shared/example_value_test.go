package shared_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/shared"
)

func ExampleValue() {
	ctx := context.Background()
	c, err := framework.Connect(ctx, os.Getenv("GOCURATOR_ZK"), framework.WithNamespace("app"))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	mode := shared.NewValue(c, "/config/mode", []byte("normal"))
	if err := mode.Set(ctx, []byte("normal")); err != nil {
		log.Fatal(err)
	}
	// Compare-and-set: a write based on a stale read is refused.
	prev, err := mode.GetVersioned(ctx)
	if err != nil {
		log.Fatal(err)
	}
	ok, err := mode.TrySet(ctx, prev, []byte("maintenance"))
	fmt.Println("switched:", ok, err)
	ok, err = mode.TrySet(ctx, prev, []byte("degraded"))
	fmt.Println("stale write applied:", ok, err)
	b, err := mode.Get(ctx)
	fmt.Printf("mode: %s %v\n", b, err)
	// Output:
	// switched: true <nil>
	// stale write applied: false <nil>
	// mode: maintenance <nil>
}

// Start keeps a cached copy current; Listen reports every new value.
func ExampleValue_Listen() {
	ctx := context.Background()
	c, err := framework.Connect(ctx, os.Getenv("GOCURATOR_ZK"), framework.WithNamespace("app"))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	banner := shared.NewValue(c, "/config/banner", []byte("welcome"))
	if err := banner.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer banner.Close()
	changed := make(chan []byte, 1)
	cancel := banner.Listen(func(b []byte) { changed <- b })
	defer cancel()

	// Another process (here: another handle) changes the value.
	if err := shared.NewValue(c, "/config/banner", nil).Set(ctx, []byte("closed for the night")); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("new banner: %s\n", <-changed)
	fmt.Printf("cached: %s\n", banner.Cached())
	// Output:
	// new banner: closed for the night
	// cached: closed for the night
}
