// Command beat is a process of the chaos run's exec workload (package
// chaos): started in the process tree of the command that `gocurator exec`
// runs under a lock, it writes a heartbeat to ZooKeeper every -every until
// it is killed: a persistent sequential node under -parent named
// t<token>-<role>-<pid>-<pgid>-<sequence>, the token from
// GOCURATOR_FENCING_TOKEN. The writes are deliberately not fenced: a beat
// the server accepts after the hold ended shows a process that outlived it.
//
// With -ignore-term it ignores SIGTERM, so only SIGKILL ends it. It stops
// by itself when -parent is gone (the round is over) or after -max, so that
// a process that escaped its group cannot write for ever.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/go-zookeeper/zk"
)

type quiet struct{}

func (quiet) Printf(string, ...any) {}

func main() {
	servers := flag.String("zk", "", "ZooKeeper servers, host:port[,host:port...]")
	parent := flag.String("parent", "", "node under which to write the beats")
	role := flag.String("role", "beat", "this process's role in the tree (no '-')")
	every := flag.Duration("every", 25*time.Millisecond, "time between beats")
	ignoreTerm := flag.Bool("ignore-term", false, "ignore SIGTERM")
	maxLife := flag.Duration("max", 2*time.Minute, "stop after this long whatever happens")
	flag.Parse()
	if *ignoreTerm {
		signal.Ignore(syscall.SIGTERM)
	}
	token, err := strconv.ParseInt(os.Getenv("GOCURATOR_FENCING_TOKEN"), 10, 64)
	if err != nil || *servers == "" || *parent == "" || strings.Contains(*role, "-") {
		fmt.Fprintln(os.Stderr, "beat: needs -zk, -parent, a role without '-' and GOCURATOR_FENCING_TOKEN")
		os.Exit(2)
	}
	conn, _, err := zk.Connect(strings.Split(*servers, ","), 4*time.Second, zk.WithLogger(quiet{}))
	if err != nil {
		fmt.Fprintln(os.Stderr, "beat:", err)
		os.Exit(1)
	}
	defer conn.Close()
	name := fmt.Sprintf("%s/t%d-%s-%d-%d-", *parent, token, *role, os.Getpid(), syscall.Getpgrp())
	stop := time.Now().Add(*maxLife)
	for time.Now().Before(stop) {
		_, err := conn.Create(name, nil, zk.FlagSequence, zk.WorldACL(zk.PermAll))
		if errors.Is(err, zk.ErrNoNode) {
			return // the round is over
		}
		time.Sleep(*every)
	}
}
