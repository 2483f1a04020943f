package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/spf13/cobra"

	"github.com/gocurator/curator/cmd/internal/inspect"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/mutex"
)

func (a *app) revokeCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "revoke NODE",
		Short: "Ask the holder of a lock node to release it (Curator's __REVOKE__)",
		Long: `Writes Curator's revocation request ("__REVOKE__") into NODE, a lock node
as locks ls prints it (its full path). A holder that made its lock revocable
(Curator's makeRevocable, gocurator's mutex.Revocable) is called back and
should release; any other holder ignores it. Nothing is deleted: see break
to take a lock from a holder that does not cooperate.

The request replaces NODE's data: a holder that is not revocable keeps the
lock, and the data it wrote there (Curator writes the client's IP address,
LeaderLatch the participant id) is lost; locks ls then shows "(revocation
asked)" as its host.

With --json, prints {"node": NODE, "revocation_requested": true}.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.revoke(cmd.Context(), args[0])
		},
	}
}

// onLockNode connects, reads node, checks it is a recipe's node, and runs
// f on it within the command's timeout.
func (a *app) onLockNode(ctx context.Context, node string, f func(ctx context.Context, c *framework.Client, st *zk.Stat) error) error {
	c, err := a.open(ctx, node)
	if err != nil {
		return err
	}
	defer c.Close()
	rctx, cancel := context.WithTimeout(ctx, a.timeout)
	defer cancel()
	st, err := a.lockNode(rctx, c, node)
	if err != nil {
		return err
	}
	return f(rctx, c, st)
}

// lockNode reads NODE and checks it is a recipe's node.
func (a *app) lockNode(ctx context.Context, c *framework.Client, node string) (*zk.Stat, error) {
	_, st, err := c.Get(ctx, node)
	if err != nil {
		return nil, a.describe(node, err)
	}
	_, name := framework.SplitPath(node)
	if !inspect.IsParticipantName(name) || st.EphemeralOwner <= 0 {
		place, z := a.locate(ctx, c, node)
		return nil, wrongKind(node, place, z, "a lock, lease or latch node", "nothing done")
	}
	return st, nil
}

func (a *app) revoke(ctx context.Context, node string) error {
	return a.onLockNode(ctx, node, func(ctx context.Context, c *framework.Client, _ *zk.Stat) error {
		if err := mutex.Revoke(ctx, c, node); err != nil {
			return a.describe(node, errors.Unwrap(err))
		}
		if a.json {
			return writeJSON(a.stdout, revokeDoc{Node: node, Requested: true}, false)
		}
		fmt.Fprintf(a.stdout, "%s: revocation requested (a revocable holder releases; others ignore it)\n", node)
		return nil
	})
}

// revokeDoc is revoke's --json document.
type revokeDoc struct {
	Node      string `json:"node"`
	Requested bool   `json:"revocation_requested"`
}

// breakDoc is break's --json document: the node deleted and its owner.
type breakDoc struct {
	Node      string    `json:"node"`
	Session   string    `json:"session"`
	Connected string    `json:"connected"`
	Addr      string    `json:"addr,omitempty"`
	Created   time.Time `json:"created"`
	Token     int64     `json:"token"`
	Deleted   bool      `json:"deleted"`
}

func (a *app) breakCommand() *cobra.Command {
	var force, yes bool
	cmd := &cobra.Command{
		Use:   "break NODE --force",
		Short: "Delete a lock node, taking the lock from its holder",
		Long: `Deletes NODE, a lock, lease or latch node (its full path, as locks ls prints
it), after showing its owner and asking for confirmation (--yes skips the
question). --force is required.

What it does to the holder: the lock passes at once to the next waiter, but
a holder that is still running is NOT stopped, and in general not told:
Curator's InterProcessMutex does not watch its own node, and a process
between two ZooKeeper calls notices nothing. For a while both processes
believe they hold the lock. (gocurator exec does watch its node: it stops
its command, SIGTERM then SIGKILL, as when the hold is lost.) Break a node only when its holder is known to be
dead or stuck (locks ls shows whether its session is still connected;
orphans lists nodes of gone sessions, which the server deletes by itself
when the session expires).

How fencing protects the resource: every hold carries a fencing token, the
czxid of its lock node, and the next holder's token is always larger. A
resource that records the largest token it has seen and refuses requests
with a smaller one (or a write made in a ZooKeeper transaction that checks
the lock node still exists: gocurator's FencedMulti) refuses the old
holder's late writes, so breaking a lock cannot corrupt it. gocurator exec
passes the token to its command in GOCURATOR_FENCING_TOKEN.

The question is read from standard input: in a script, pass --yes. With
--json, prints {"node", "session", "connected", "created", "token",
"deleted"} instead of the lines (the question still goes to stderr).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !force {
				return usageError{errors.New("break deletes a holder's lock node: pass --force (read gocurator break --help first)")}
			}
			return a.breakNode(cmd.Context(), args[0], yes)
		},
	}
	cmd.Flags().BoolVar(&force, "force", false, "really delete the node")
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "do not ask for confirmation")
	return cmd
}

func (a *app) breakNode(ctx context.Context, node string, yes bool) error {
	return a.onLockNode(ctx, node, func(ctx context.Context, c *framework.Client, st *zk.Stat) error {
		return a.confirmAndDelete(ctx, c, node, st, yes)
	})
}

// confirmAndDelete shows node's owner, asks unless yes, and deletes it.
func (a *app) confirmAndDelete(rctx context.Context, c *framework.Client, node string, st *zk.Stat, yes bool) error {
	state, addr := inspect.QuerySessions(rctx, inspect.Servers(a.zk), a.timeout).State(st.EphemeralOwner)
	doc := breakDoc{Node: node, Session: inspect.SessionHex(st.EphemeralOwner), Connected: state, Addr: addr,
		Created: time.UnixMilli(st.Ctime).UTC(), Token: st.Czxid}
	if !a.json {
		from := ""
		if addr != "" {
			from = " from " + addr
		}
		fmt.Fprintf(a.stdout, "%s: owner session %s (connected: %s%s), created %s, fencing token %d\n", node,
			doc.Session, state, from, doc.Created.Format(time.RFC3339), st.Czxid)
	}
	if !yes {
		fmt.Fprintf(a.stderr, "Delete it? A holder still running keeps running as if it held the lock. Type yes to delete: ")
		line, err := bufio.NewReader(a.stdin).ReadString('\n')
		if line == "" && err != nil {
			// No terminal (cron, a pipe): nobody can answer.
			return errors.New("not confirmed: no answer on standard input (no terminal?): pass --yes to delete without the question; nothing deleted")
		}
		if strings.TrimSpace(line) != "yes" {
			return errors.New("not confirmed: nothing deleted")
		}
	}
	// The version pins the node that was shown: one made again under the
	// same name cannot be, as names carry a sequence; a data change (a
	// revocation request) is no reason to refuse.
	if err := c.Delete(rctx, node); err != nil {
		return a.describe(node, err)
	}
	if a.json {
		doc.Deleted = true
		return writeJSON(a.stdout, doc, false)
	}
	fmt.Fprintf(a.stdout, "%s: deleted (the lock passes to the next waiter)\n", node)
	return nil
}
