// Command chaos runs gocurator's fault-tolerance proof (package chaos): the
// lock recipes against a three-node ZooKeeper ensemble under faults (silent
// partitions and cuts timed to land on grants included), by clients of the
// standard and of the session error policy, the queues (consumer processes
// killed with SIGKILL), and gocurator exec under lock loss. It prints the report, writes it to -report when given, and exits 1
// on any violation. Run it from within the repository: it builds gocurator.
//
//	go run ./cmd/chaos -duration 30m -report chaos-report.txt
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"time"

	"github.com/gocurator/curator/cmd/internal/chaos"
)

func main() {
	duration := flag.Duration("duration", 30*time.Minute, "how long to inject faults")
	seed := flag.Int64("seed", time.Now().UnixNano(), "seed of the fault schedule (default: time-based)")
	sessionTimeout := flag.Duration("session-timeout", 4*time.Second, "session timeout of every client")
	clients := flag.Int("clients", 3, "clients of each workload (standard and session error policy)")
	reportFile := flag.String("report", "", "also write the report to this file")
	flag.Parse()

	log.SetFlags(log.Ltime | log.Lmicroseconds)
	log.Printf("chaos: seed %d, duration %v, session timeout %v", *seed, *duration, *sessionTimeout)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	rep, err := chaos.Run(ctx, chaos.Config{
		Duration:       *duration,
		Seed:           *seed,
		SessionTimeout: *sessionTimeout,
		Clients:        *clients,
		Logf:           log.Printf,
	})
	text := rep.String()
	fmt.Print(text)
	if *reportFile != "" {
		if werr := os.WriteFile(*reportFile, []byte(text), 0o644); werr != nil {
			log.Print(werr)
		}
	}
	if err != nil {
		log.Printf("chaos: run failed: %v", err)
		os.Exit(2)
	}
	if !rep.OK() {
		os.Exit(1)
	}
}
