package main

import (
	"context"
	"errors"
	"time"

	"github.com/spf13/cobra"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/leader"
)

// electOptions are elect exec's own flags.
type electOptions struct {
	id       string
	selector bool
}

func (a *app) electCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "elect",
		Short: "Take part in a leader election",
	}
	var (
		o  execOptions
		eo electOptions
	)
	run := &cobra.Command{
		Use:   "exec PATH -- CMD [ARGS...]",
		Short: "Run CMD only while this process leads the election at PATH",
		Long: `Campaigns in the leader election at PATH (Curator's LeaderLatch layout;
--selector for LeaderSelector's), runs CMD once this process leads, resigns
when CMD exits, and exits with CMD's status (128+n if a signal n ended it).
Java processes with Curator's LeaderLatch (or LeaderSelector) on the same
path take part in the same election.

CMD gets the term's fencing token (the czxid of our election node, larger
for every later term) in GOCURATOR_FENCING_TOKEN and the node's path in
GOCURATOR_LOCK_NODE.

Leadership (the hold) is lost when the connection is suspended or the
session expires, or when our node is deleted. ` + groupHelp,
		Example: `  gocurator --zk zk1:2181 elect exec --id $(hostname) /elections/scheduler -- ./scheduler`,
		Args:    cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if n := cmd.ArgsLenAtDash(); n != 1 {
				return usageError{errors.New("elect exec takes PATH, then -- and the command")}
			}
			o.elect = &eo
			return a.exec(cmd.Context(), args[0], args[1:], o)
		},
	}
	f := run.Flags()
	f.StringVar(&eo.id, "id", "", "participant id, written into our node (Curator's participant id; default: none)")
	f.BoolVar(&eo.selector, "selector", false, "Curator's LeaderSelector layout (a mutex, lock- nodes) instead of LeaderLatch's")
	f.DurationVar(&o.grace, "grace", 10*time.Second, "how long CMD's process group has between SIGTERM and SIGKILL")
	f.DurationVar(&o.wait, "wait", 0, "give up if not leading within this long (0: wait for ever)")
	notAcquiredFlag(run, &o)
	cmd.AddCommand(run)
	return cmd
}

// campaign leads the election at path and returns the term as a hold.
func campaign(ctx context.Context, c *framework.Client, path string, o electOptions) (*hold, error) {
	opts := []leader.Option{leader.WithID(o.id)}
	if o.selector {
		opts = append(opts, leader.SelectorLayout())
	}
	t, err := leader.New(c, path, opts...).Campaign(ctx)
	if err != nil {
		return nil, err
	}
	return &hold{node: t.Node(), token: t.Token(), done: t.Done(), err: t.Err, release: t.Resign}, nil
}
