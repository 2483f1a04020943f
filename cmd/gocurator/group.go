package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/go-zookeeper/zk"
	"github.com/spf13/cobra"

	"github.com/gocurator/curator/cmd/internal/inspect"
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

	owner int64
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
is not connected any more is about to be dropped by the server.

A path that holds something else (service instances, leader latch or lock
nodes, persistent nodes) is refused with exit 65, naming what it holds.`,
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
	c, err := a.open(ctx, path)
	if err != nil {
		return err
	}
	defer c.Close()
	rctx, cancel := context.WithTimeout(ctx, a.timeout)
	defer cancel()
	place, z, err := inspect.Locate(rctx, c, path)
	if errors.Is(err, zk.ErrNoNode) {
		return fmt.Errorf("%s: no such node: no group there", path)
	}
	if err != nil {
		return a.describe(path, err)
	}
	// A group with no member is an empty directory; anything else that
	// is no group (service instances, latch nodes, plain nodes) is
	// refused rather than listed as members.
	empty := place.Layout.Kind == "" && place.Part == "" && !z.IsEphemeral() && len(z.Children) == 0
	if !empty && (place.Layout.Kind != inspect.KindGroup || place.Part != "") {
		return wrongKind(path, place, z, "a group", "")
	}
	members := make([]memberDoc, 0, len(z.Children))
	for _, m := range z.Children {
		d := memberDoc{ID: m.Name, Created: m.Ctime, owner: m.Owner}
		if utf8.Valid(m.Data) {
			d.Payload = string(m.Data)
		} else {
			d.PayloadBytes = m.Data
		}
		members = append(members, d)
	}
	s := inspect.QuerySessions(rctx, inspect.Servers(a.zk), a.timeout)
	for i := range members {
		if owner := members[i].owner; owner != 0 {
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
