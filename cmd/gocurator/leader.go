package main

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/gocurator/curator/cmd/internal/inspect"
)

// leaderDoc is leader show's --json document.
type leaderDoc struct {
	Path string `json:"path"`
	// Layout is latch (LeaderLatch, latch- nodes) or selector
	// (LeaderSelector, a mutex's lock- nodes).
	Layout       string              `json:"layout"`
	Leader       *leaderParticipant  `json:"leader"`
	Participants []leaderParticipant `json:"participants"`
	// Sessions is as in locks ls: "complete" when every server answered
	// cons, else "unknown".
	Sessions string `json:"sessions"`
}

// leaderParticipant is a participant with its id (the node's data).
type leaderParticipant struct {
	ID string `json:"id"`
	inspect.Participant
}

func (a *app) leaderCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "leader",
		Short: "Inspect leader elections",
	}
	show := &cobra.Command{
		Use:   "show PATH",
		Short: "Show the leader and the other participants of the election at PATH",
		Long: `Shows the election at PATH: Curator's LeaderLatch layout (latch- nodes) or
LeaderSelector's (a mutex: lock- nodes). The leader is the first node in
sequence order; each participant's id is its node's data.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.leaderShow(cmd.Context(), args[0])
		},
	}
	cmd.AddCommand(show)
	return cmd
}

func (a *app) leaderShow(ctx context.Context, path string) error {
	c, err := a.open(ctx, path)
	if err != nil {
		return err
	}
	defer c.Close()
	locks, s, err := a.listing(ctx, c, path, false)
	if err != nil {
		return err
	}
	doc := leaderDoc{Path: path, Participants: []leaderParticipant{}}
	var election *inspect.Lock
	for i := range locks {
		if locks[i].Kind == inspect.KindLatch {
			election, doc.Layout = &locks[i], "latch"
			break
		}
		if locks[i].Kind == inspect.KindMutex && election == nil {
			election, doc.Layout = &locks[i], "selector"
		}
	}
	if election == nil && len(locks) > 0 {
		return wrongKind(path, lockPlace(locks[0]), nil, "a leader election", "")
	}
	if election != nil {
		for _, p := range append(append([]inspect.Participant{}, election.Holders...), election.Waiters...) {
			doc.Participants = append(doc.Participants, leaderParticipant{ID: p.Host, Participant: p})
		}
		if len(doc.Participants) > 0 {
			doc.Leader = &doc.Participants[0]
		}
	}
	if a.json {
		doc.Sessions = sessionsState(s)
		return writeJSON(a.stdout, doc, false)
	}
	writeLeader(a.stdout, doc)
	warnSessions(a.stderr, s)
	return nil
}

func writeLeader(w io.Writer, doc leaderDoc) {
	if doc.Leader == nil {
		fmt.Fprintf(w, "%s: no leader (no participant)\n", doc.Path)
		return
	}
	fmt.Fprintf(w, "%s  %s election  leader %q (session %s, token %d)\n", doc.Path, doc.Layout,
		doc.Leader.ID, doc.Leader.Session, doc.Leader.Token)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  #\tSTATE\tID\tNODE\tSESSION\tAGE\tTOKEN\tCONNECTED")
	for i, p := range doc.Participants {
		state := "follower"
		if i == 0 {
			state = "leader"
		}
		fmt.Fprintf(tw, "  %d\t%s\t%s\t%s\t%s\t%s\t%d\t%s\n", i+1, state, p.ID, p.Name(), p.Session,
			inspect.FormatAge(p.AgeSeconds), p.Token, p.Connected)
	}
	_ = tw.Flush()
}
