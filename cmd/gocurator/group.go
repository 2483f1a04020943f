package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/go-zookeeper/zk"
	"github.com/spf13/cobra"

	"github.com/gocurator/curator/cmd/internal/inspect"
	"github.com/gocurator/curator/framework"
)

// groupDoc is group ls's --json document.
type groupDoc struct {
	Path    string      `json:"path"`
	Members []memberDoc `json:"members"`
	// Sessions is as in locks ls: "complete" when every server answered
	// cons, else "unknown".
	Sessions string `json:"sessions"`
}

// memberDoc is one member of a group: Curator's GroupMember node
// <path>/<id>.
type memberDoc struct {
	ID string `json:"id"`
	// Payload is the node's data as text; PayloadBytes holds it instead
	// when it is not UTF-8.
	Payload      string `json:"payload"`
	PayloadBytes []byte `json:"payloadBytes,omitempty"`
	// Session is the owner session ("" for a persistent node, which is
	// no GroupMember's); Connected whether it is still connected (yes, no,
	// unknown), from the servers' "cons", as in locks ls.
	Session   string    `json:"session,omitempty"`
	Connected string    `json:"connected,omitempty"`
	Created   time.Time `json:"created"`

	st *zk.Stat
}

func (a *app) groupCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "group",
		Short: "Inspect group membership (Curator's GroupMember, gocurator's recipes/group)",
	}
	ls := &cobra.Command{
		Use:   "ls PATH",
		Short: "List the members of the group at PATH",
		Long: `Lists the members of the group at PATH, Curator's GroupMember layout:
one ephemeral node <PATH>/<id> per member, its payload as data. For each
member: its id, payload, owner session and whether that session is still
connected (from the servers' "cons", as locks ls): a member whose session
is not connected any more is about to be dropped by the server.`,
		Example: `  gocurator --zk zk1:2181 group ls /workers
  gocurator --zk zk1:2181 --json group ls /workers | jq -r '.members[].id'`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.groupLs(cmd.Context(), args[0])
		},
	}
	cmd.AddCommand(ls)
	return cmd
}

func (a *app) groupLs(ctx context.Context, path string) error {
	if err := framework.ValidatePath(path); err != nil {
		return usageError{fmt.Errorf("%q is not a valid ZooKeeper path (absolute, no trailing slash)", path)}
	}
	c, err := a.connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	rctx, cancel := context.WithTimeout(ctx, a.timeout)
	defer cancel()
	ids, _, err := c.Children(rctx, path)
	if errors.Is(err, zk.ErrNoNode) {
		return fmt.Errorf("%s: no such node: no group there", path)
	}
	if err != nil {
		return a.describe(path, err)
	}
	slices.Sort(ids)
	docs := make([]memberDoc, len(ids))
	err = forEach(len(ids), func(i int) error {
		data, st, err := c.Get(rctx, framework.JoinPath(path, ids[i]))
		if errors.Is(err, zk.ErrNoNode) {
			return nil // left meanwhile
		}
		if err != nil {
			return err
		}
		docs[i] = memberDoc{ID: ids[i], Created: time.UnixMilli(st.Ctime).UTC(), st: st}
		if utf8.Valid(data) {
			docs[i].Payload = string(data)
		} else {
			docs[i].PayloadBytes = data
		}
		return nil
	})
	if err != nil {
		return a.describe(path, err)
	}
	members := make([]memberDoc, 0, len(docs))
	for _, d := range docs {
		if d.st != nil {
			members = append(members, d)
		}
	}
	s := inspect.QuerySessions(rctx, inspect.Servers(a.zk), a.timeout)
	for i := range members {
		if owner := members[i].st.EphemeralOwner; owner != 0 {
			members[i].Session = inspect.SessionHex(owner)
			members[i].Connected, _ = s.State(owner)
		}
	}
	if a.json {
		return writeJSON(a.stdout, groupDoc{Path: path, Members: members, Sessions: sessionsState(s)}, false)
	}
	writeGroup(a.stdout, path, members)
	if len(members) > 0 {
		warnSessions(a.stderr, s)
	}
	return nil
}

func writeGroup(w io.Writer, path string, members []memberDoc) {
	fmt.Fprintf(w, "%s  %s\n", path, plural(len(members), "member"))
	if len(members) == 0 {
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  ID\tPAYLOAD\tSESSION\tCONNECTED")
	for _, m := range members {
		payload := m.Payload
		if m.PayloadBytes != nil {
			payload = fmt.Sprintf("(%d bytes, not UTF-8)", len(m.PayloadBytes))
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", m.ID, dash(payload), dash(m.Session), dash(m.Connected))
	}
	_ = tw.Flush()
}
