// Command qconsume is a consumer process of the chaos run's queue workload
// (package chaos): it consumes a workload's lock-safety queue with fenced
// consumption (chaos.ConsumeFenced: each item's done marker and its removal
// in one transaction) until it is killed. The run kills it with SIGKILL
// every few seconds, so that it dies mid-item; SIGTERM stops it cleanly
// (its session closed, no lock node left).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/gocurator/curator/cmd/internal/chaos"
	"github.com/gocurator/curator/connstate"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/retry"
)

func main() {
	servers := flag.String("zk", "", "ZooKeeper servers, host:port[,host:port...]")
	workload := flag.String("workload", chaos.WorkloadStandard, "the workload whose queue to consume (standard or session)")
	name := flag.String("name", "p", "this consumer's name, written in its done markers after \"process-\"")
	st := flag.Duration("session-timeout", 4*time.Second, "session timeout")
	flag.Parse()
	if *servers == "" {
		fmt.Fprintln(os.Stderr, "qconsume: needs -zk")
		os.Exit(2)
	}
	// The workload's error policy, as its in-process clients have.
	var policy connstate.ErrorPolicy = connstate.StandardPolicy{}
	if *workload == chaos.WorkloadSession {
		policy = connstate.SessionPolicy{}
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	c, err := framework.Connect(ctx, *servers, framework.WithSessionTimeout(*st), framework.WithErrorPolicy(policy),
		framework.WithRetryPolicy(retry.BoundedExponentialBackoff(50*time.Millisecond, time.Second, 30)),
		framework.WithConnectionTimeout(2**st))
	if err != nil {
		fmt.Fprintln(os.Stderr, "qconsume:", err)
		os.Exit(1)
	}
	defer c.Close()
	// The run counts what processes consumed by this prefix of the markers.
	err = chaos.ConsumeFenced(ctx, c, *workload, "process-"+*name, nil)
	if ctx.Err() == nil {
		fmt.Fprintln(os.Stderr, "qconsume:", err)
		c.Close()
		os.Exit(1)
	}
}
