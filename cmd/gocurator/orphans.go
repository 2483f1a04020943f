package main

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/gocurator/curator/cmd/internal/inspect"
)

// orphansDoc is orphans' --json document.
type orphansDoc struct {
	Orphans []inspect.Orphan `json:"orphans"`
	// Sessions is "complete" when every server answered cons; "unknown"
	// otherwise, and then nodes of gone sessions cannot be told.
	Sessions string `json:"sessions"`
}

func (a *app) orphansCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "orphans PATH",
		Short: "Show nodes left behind under PATH",
		Long: `Walks every node under PATH and shows:

  session-gone  ephemeral nodes (lock nodes, leases, latches) whose owner
                session no server lists as connected: the owner is gone
                but the session has not expired yet, so the node, and the
                lock it holds, stay until the session timeout passes.
                Needs the servers' "cons" four-letter word.
  empty-parent  nodes without data that once had children and have none
                now: lock directories. The server deletes an empty
                container (what Curator 4+ and gocurator make) at its next
                check, every minute by default, but never a persistent one
                (what older clients make), so those pile up. ZooKeeper does
                not tell a client which kind a node is: one still listed
                after a minute or two is persistent.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.orphans(cmd.Context(), args[0])
		},
	}
}

func (a *app) orphans(ctx context.Context, path string) error {
	c, err := a.open(ctx, path)
	if err != nil {
		return err
	}
	defer c.Close()
	rctx, cancel := context.WithTimeout(ctx, a.timeout)
	defer cancel()
	root, err := inspect.Load(rctx, c, path, -1)
	if err != nil {
		return a.describe(path, err)
	}
	s := inspect.QuerySessions(rctx, inspect.Servers(a.zk), a.timeout)
	doc := orphansDoc{Orphans: inspect.Orphans(path, root, s, time.Now()), Sessions: "complete"}
	if doc.Orphans == nil {
		doc.Orphans = []inspect.Orphan{}
	}
	if !s.Complete {
		doc.Sessions = "unknown"
		fmt.Fprintf(a.stderr, "gocurator: note: cannot tell nodes of gone sessions: %s\n", strings.Join(s.Problems, "; "))
	}
	if a.json {
		return writeJSON(a.stdout, doc, false)
	}
	if len(doc.Orphans) == 0 {
		fmt.Fprintf(a.stdout, "%s: no orphans\n", path)
		return nil
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "REASON\tNODE\tSESSION\tAGE\tTOKEN")
	for _, o := range doc.Orphans {
		session := o.Session
		if session == "" {
			session = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\n", o.Reason, o.Node, session, inspect.FormatAge(o.AgeSeconds), o.Token)
	}
	return tw.Flush()
}
