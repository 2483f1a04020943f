package framework_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/framework"
)

// A configuration as ZooKeeper publishes it at /zookeeper/config, and the
// addresses clients connect to: the wildcard client address of server 1
// gives way to its quorum host, and server 3, without a client port, is
// left out.
func ExampleParseConfig() {
	cfg, err := framework.ParseConfig([]byte(
		"server.1=zk1.example.com:2888:3888:participant;0.0.0.0:2181\n" +
			"server.2=zk2.example.com:2888:3888:participant;zk2.example.com:2181\n" +
			"server.3=zk3.example.com:2888:3888:observer\n" +
			"version=100000003\n"))
	if err != nil {
		log.Fatal(err)
	}
	for _, m := range cfg.Members {
		fmt.Printf("%d %s %q\n", m.ID, m.Role, m.ClientAddr())
	}
	fmt.Println(cfg.ConnectString())
	fmt.Printf("%#x\n", cfg.Version)
	// Output:
	// 1 participant "zk1.example.com:2181"
	// 2 participant "zk2.example.com:2181"
	// 3 observer ""
	// zk1.example.com:2181,zk2.example.com:2181
	// 0x100000003
}

// The tracker follows the ensemble's reconfigurations; ConnectString shows
// the servers the next reconnection picks from (a standalone server, as in
// this package's tests, has no dynamic configuration, so they stay those
// of the connect string).
func ExampleWithEnsembleTracker() {
	ctx := context.Background()
	c, err := framework.Connect(ctx, os.Getenv("GOCURATOR_ZK")+"/example-tracker", framework.WithEnsembleTracker())
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	fmt.Println(c.ConnectString() == os.Getenv("GOCURATOR_ZK")+"/example-tracker")
	// Output: true
}

// Replacing member 3 by a new server 4, only if nobody reconfigured the
// ensemble since Config read it. The servers must allow reconfiguration
// (reconfigEnabled=true); this package's test server does not.
func ExampleClient_Reconfig() {
	ctx := context.Background()
	c, err := framework.Connect(ctx, os.Getenv("GOCURATOR_ZK"))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	cfg, err := c.Config(ctx)
	if err != nil {
		log.Fatal(err)
	}
	_, err = c.Reconfig(ctx,
		framework.Joining("server.4=10.0.0.4:2888:3888:participant;10.0.0.4:2181"),
		framework.Leaving(3),
		framework.FromConfig(cfg.Version))
	fmt.Println(errors.Is(err, zk.ErrReconfigDisabled))
	// Output: true
}
