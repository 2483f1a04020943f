package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/spf13/cobra"

	"github.com/gocurator/curator/cmd/internal/inspect"
	"github.com/gocurator/curator/framework"
)

// containerOwner is the ephemeralOwner ZooKeeper reports for a container
// node (Long.MIN_VALUE): Curator's DistributedDoubleBarrier makes its path
// as one, DistributedBarrier makes a plain PERSISTENT node.
const containerOwner = math.MinInt64

// Kinds of barrierDoc.
const (
	kindBarrier = "barrier"        // Curator's DistributedBarrier
	kindDouble  = "double barrier" // Curator's DistributedDoubleBarrier
)

// barrierDoc is barrier show's --json document.
type barrierDoc struct {
	Path string `json:"path"`
	// Kind is "barrier" (DistributedBarrier: closed while its node exists)
	// or "double barrier" (DistributedDoubleBarrier: member children and
	// "ready").
	Kind string `json:"kind"`
	// State of a barrier: "closed" (the node exists) or "open".
	// Of a double barrier: "waiting" (no member has passed Enter),
	// "entered" (the round's members have passed Enter; latecomers wait)
	// or "empty".
	State string `json:"state"`
	// Created is when a closed barrier's node was made.
	Created *time.Time `json:"created,omitempty"`
	// Size is --size, the member count the barrier was made for (ZooKeeper
	// does not store it); 0 when not given.
	Size int `json:"size,omitempty"`
	// Members are a double barrier's member nodes, oldest first.
	Members []barrierMemberDoc `json:"members,omitempty"`
	// Ready is the double barrier's ready node, nil when there is none.
	Ready *barrierReadyDoc `json:"ready,omitempty"`
	// Sessions is as in locks ls: "complete" when every server answered
	// cons, else "unknown".
	Sessions string `json:"sessions,omitempty"`
}

// barrierMemberDoc is one member of a double barrier.
type barrierMemberDoc struct {
	Node      string    `json:"node"`
	Session   string    `json:"session"`
	Connected string    `json:"connected"`
	Created   time.Time `json:"created"`
	// Entered says the member's Enter has been let through: the ready node
	// is newer than its node (the round rule: recipes/barrier, and
	// Curator's members of the round that made it).
	Entered bool `json:"entered"`
	czxid   int64
	owner   int64
}

// barrierReadyDoc is a double barrier's ready node.
type barrierReadyDoc struct {
	Created time.Time `json:"created"`
	// Stale is true when no member is older than it: a ready node left by
	// an earlier round (its members crashed or never left).
	Stale bool `json:"stale"`
}

func (a *app) barrierCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "barrier",
		Short: "Inspect barriers (Curator's DistributedBarrier and DistributedDoubleBarrier)",
	}
	var size int
	show := &cobra.Command{
		Use:   "show PATH",
		Short: "Show the state of the barrier at PATH",
		Long: `Shows the barrier at PATH. A DistributedBarrier is closed while its node
exists and open when it does not. A DistributedDoubleBarrier (recipes/barrier
Double) has a member child per process that entered, each with its owner
session and whether it is still connected (from the servers' "cons", as
locks ls), and a "ready" child once the round's last member arrived: members
older than ready have passed Enter, younger ones wait for the next round.

The member count a double barrier was made for is not stored in ZooKeeper:
give it with --size to see how many members are still missing. A path
holding another recipe's nodes is refused with exit 65.`,
		Example: `  gocurator --zk zk1:2181 barrier show /barriers/nightly
  gocurator --zk zk1:2181 --json barrier show /barriers/job --size 8`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.barrierShow(cmd.Context(), args[0], size)
		},
	}
	show.Flags().IntVar(&size, "size", 0, "the double barrier's member count")
	cmd.AddCommand(show)
	return cmd
}

func (a *app) barrierShow(ctx context.Context, path string, size int) error {
	if size < 0 {
		return usageError{fmt.Errorf("--size %d: must be positive", size)}
	}
	c, err := a.open(ctx, path)
	if err != nil {
		return err
	}
	defer c.Close()
	rctx, cancel := context.WithTimeout(ctx, a.timeout)
	defer cancel()
	if err := a.checkBarrier(rctx, c, path); err != nil {
		return err
	}
	doc, err := readBarrier(rctx, c, path)
	if err != nil {
		return a.describe(path, err)
	}
	doc.Size = size
	var s *inspect.Sessions
	if len(doc.Members) > 0 {
		s = inspect.QuerySessions(rctx, inspect.Servers(a.zk), a.timeout)
		for i := range doc.Members {
			doc.Members[i].Connected, _ = s.State(doc.Members[i].owner)
		}
		doc.Sessions = sessionsState(s)
	}
	if a.json {
		return writeJSON(a.stdout, doc, false)
	}
	writeBarrier(a.stdout, doc, time.Now())
	if s != nil {
		warnSessions(a.stderr, s)
	}
	return nil
}

// readBarrier reads the barrier at path: its node, and for a double
// barrier its children. Member Connected is left to the caller.
func readBarrier(ctx context.Context, c *framework.Client, path string) (barrierDoc, error) {
	doc := barrierDoc{Path: path}
	_, st, err := c.Get(ctx, path)
	if errors.Is(err, zk.ErrNoNode) {
		// Either kind: a DistributedBarrier is open, a double barrier's
		// container was reaped once empty.
		doc.Kind, doc.State = kindBarrier, "open"
		return doc, nil
	}
	if err != nil {
		return doc, err
	}
	kids, _, err := c.Children(ctx, path)
	if errors.Is(err, zk.ErrNoNode) {
		doc.Kind, doc.State = kindBarrier, "open"
		return doc, nil
	}
	if err != nil {
		return doc, err
	}
	if len(kids) == 0 && st.EphemeralOwner != containerOwner {
		created := time.UnixMilli(st.Ctime).UTC()
		doc.Kind, doc.State, doc.Created = kindBarrier, "closed", &created
		return doc, nil
	}
	doc.Kind = kindDouble
	var ready *zk.Stat
	members := make([]*zk.Stat, len(kids))
	err = forEach(len(kids), func(i int) error {
		_, st, err := c.Get(ctx, framework.JoinPath(path, kids[i]))
		if errors.Is(err, zk.ErrNoNode) {
			return nil // left meanwhile
		}
		members[i] = st
		return err
	})
	if err != nil {
		return doc, err
	}
	for i, st := range members {
		switch {
		case st == nil:
		case kids[i] == "ready":
			ready = st
		default:
			doc.Members = append(doc.Members, barrierMemberDoc{Node: kids[i], Session: inspect.SessionHex(st.EphemeralOwner),
				Created: time.UnixMilli(st.Ctime).UTC(), czxid: st.Czxid, owner: st.EphemeralOwner})
		}
	}
	slices.SortFunc(doc.Members, func(x, y barrierMemberDoc) int { return cmpInt64(x.czxid, y.czxid) })
	entered := 0
	for i := range doc.Members {
		if ready != nil && doc.Members[i].czxid < ready.Czxid {
			doc.Members[i].Entered = true
			entered++
		}
	}
	if ready != nil {
		doc.Ready = &barrierReadyDoc{Created: time.UnixMilli(ready.Ctime).UTC(), Stale: entered == 0}
	}
	switch {
	case entered > 0:
		doc.State = "entered"
	case len(doc.Members) > 0:
		doc.State = "waiting"
	default:
		doc.State = "empty"
	}
	return doc, nil
}

func cmpInt64(x, y int64) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

func writeBarrier(w io.Writer, d barrierDoc, now time.Time) {
	if d.Kind == kindBarrier {
		switch d.State {
		case "closed":
			fmt.Fprintf(w, "%s  barrier  closed (since %s ago)\n", d.Path, since(now, *d.Created))
		default:
			fmt.Fprintf(w, "%s  barrier  open (no node)\n", d.Path)
		}
		return
	}
	of := ""
	if d.Size > 0 {
		of = fmt.Sprintf(" of %d", d.Size)
	}
	ready := "no ready node"
	if d.Ready != nil {
		ready = fmt.Sprintf("ready %s ago", since(now, d.Ready.Created))
		if d.Ready.Stale {
			ready += " (stale: older than every member)"
		}
	}
	fmt.Fprintf(w, "%s  double barrier  %s, %s%s, %s\n", d.Path, d.State, plural(len(d.Members), "member"), of, ready)
	if d.Size > 0 && d.State == "waiting" && len(d.Members) < d.Size {
		fmt.Fprintf(w, "waiting for %d more\n", d.Size-len(d.Members))
	}
	if len(d.Members) == 0 {
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "MEMBER\tSESSION\tCONNECTED\tAGE\tENTERED")
	for _, m := range d.Members {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", m.Node, m.Session, m.Connected, since(now, m.Created), yesNo(m.Entered))
	}
	_ = tw.Flush()
}

// since formats the age of something made at t.
func since(now, t time.Time) string { return inspect.FormatAge(now.Sub(t).Seconds()) }

// checkBarrier refuses (exit 65) a path whose children are another
// recipe's (a lock's, a group's with ids that are no UUIDs, a service's):
// read as a double barrier they would be shown as its members. A missing
// or childless node is a barrier's.
func (a *app) checkBarrier(ctx context.Context, c *framework.Client, path string) error {
	place, z, err := inspect.Locate(ctx, c, path)
	if err != nil || len(z.Children) == 0 && !z.IsEphemeral() {
		return nil // readBarrier says what it is, or why it cannot be read
	}
	if place.Part == "" && inspect.MayBeDoubleBarrier(place.Layout) {
		return nil
	}
	return wrongKind(path, place, z, "a barrier", "")
}
