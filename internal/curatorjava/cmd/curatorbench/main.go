// Command curatorbench runs the Apache Curator lock benchmark of package
// curatorjava against a ZooKeeper ensemble and prints its JSON result.
//
//	go run ./internal/curatorjava/cmd/curatorbench -connect localhost:2181 \
//		-workload mutex -clients 8 -warmup 5s -measure 10s
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"

	"github.com/gocurator/curator/internal/curatorjava"
)

func main() {
	var cfg curatorjava.BenchConfig
	flag.StringVar(&cfg.ConnectString, "connect", "localhost:2181", "ZooKeeper connect string")
	flag.StringVar(&cfg.Path, "path", "", "lock path (default /curatorjava-bench/<workload>)")
	flag.StringVar(&cfg.Workload, "workload", "mutex", "mutex, read, write or semv2")
	flag.IntVar(&cfg.Clients, "clients", 8, "concurrent clients, one ZooKeeper session each")
	flag.IntVar(&cfg.MaxLeases, "leases", 1, "semv2: number of leases")
	flag.DurationVar(&cfg.Warmup, "warmup", 5e9, "warm-up period (not measured)")
	flag.DurationVar(&cfg.Measure, "measure", 10e9, "measured period")
	flag.Parse()
	cfg.Stderr = os.Stderr

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	res, err := curatorjava.RunBench(ctx, cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	out, _ := json.Marshal(res)
	fmt.Println(string(out))
}
