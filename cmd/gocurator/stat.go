package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/spf13/cobra"

	"github.com/gocurator/curator/cmd/internal/inspect"
	"github.com/gocurator/curator/framework"
)

// statDoc is a node's stat with zkCli's field names (stat's --json
// document, and get's "stat").
type statDoc struct {
	Czxid          int64     `json:"cZxid"`
	Ctime          time.Time `json:"ctime"`
	Mzxid          int64     `json:"mZxid"`
	Mtime          time.Time `json:"mtime"`
	Pzxid          int64     `json:"pZxid"`
	Cversion       int32     `json:"cversion"`
	DataVersion    int32     `json:"dataVersion"`
	AclVersion     int32     `json:"aclVersion"`
	EphemeralOwner string    `json:"ephemeralOwner"`
	DataLength     int32     `json:"dataLength"`
	NumChildren    int32     `json:"numChildren"`
}

func newStatDoc(st *zk.Stat) statDoc {
	return statDoc{
		Czxid: st.Czxid, Ctime: time.UnixMilli(st.Ctime).UTC(),
		Mzxid: st.Mzxid, Mtime: time.UnixMilli(st.Mtime).UTC(),
		Pzxid: st.Pzxid, Cversion: st.Cversion, DataVersion: st.Version, AclVersion: st.Aversion,
		EphemeralOwner: inspect.SessionHex(st.EphemeralOwner), DataLength: st.DataLength, NumChildren: st.NumChildren,
	}
}

// recipeDoc says what recipe a path belongs to (the JSON of ls, get and
// stat): Kind alone for a recipe, Kind, Part and Recipe for one of its
// nodes, nothing for neither.
type recipeDoc struct {
	// Kind is the recipe's kind (locks ls's kinds, group, service,
	// service-discovery, counter, double-barrier, queue, queue-lock,
	// simple-queue).
	Kind string `json:"kind,omitempty"`
	// Part is what the node is in that recipe: participant, gate,
	// leases, member, instance, service, writer, ready or item.
	Part string `json:"part,omitempty"`
	// Recipe is the recipe's path, when Part is set.
	Recipe string `json:"recipe,omitempty"`
}

func newRecipeDoc(p inspect.Place) recipeDoc {
	d := recipeDoc{Kind: p.Layout.Kind, Part: p.Part}
	if p.Part != "" {
		d.Recipe = p.Layout.Path
	}
	return d
}

// statPathDoc is stat's --json document.
type statPathDoc struct {
	Path string `json:"path"`
	statDoc
	recipeDoc
}

func (a *app) statCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "stat PATH",
		Short: "Print the stat of the node at PATH, as zkCli's stat, and its recipe",
		Long: `Prints the stat of the node at PATH as zkCli's stat does (cZxid, ctime,
mZxid, mtime, pZxid, cversion, dataVersion, aclVersion, ephemeralOwner,
dataLength, numChildren; zxids in hex, times in the local time zone), then
"recipe = ..." when PATH is a recipe gocurator recognises, or one of a
recipe's nodes. Exit 0, or 1 when the node does not exist.

With --json: {"path", the stat fields under zkCli's names (zxids as numbers,
times in RFC 3339, ephemeralOwner in hex), "kind", "part", "recipe"}.`,
		Example: `  gocurator --zk zk1:2181 stat /locks/orders
  gocurator --zk zk1:2181 --json stat /config/orders | jq .dataVersion`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.stat(cmd.Context(), args[0])
		},
	}
}

func (a *app) stat(ctx context.Context, path string) error {
	c, err := a.open(ctx, path)
	if err != nil {
		return err
	}
	defer c.Close()
	rctx, cancel := context.WithTimeout(ctx, a.timeout)
	defer cancel()
	st, err := c.Exists(rctx, path)
	if err == nil && st == nil {
		err = zk.ErrNoNode
	}
	if err != nil {
		return a.describe(path, err)
	}
	place, z := a.locate(rctx, c, path)
	if a.json {
		return writeJSON(a.stdout, statPathDoc{Path: path, statDoc: newStatDoc(st), recipeDoc: newRecipeDoc(place)}, false)
	}
	writeStat(a.stdout, st)
	writeRecipeLine(a.stdout, place, z)
	return nil
}

// locate is inspect.Locate for a node known to exist: what cannot be read
// leaves the recipe unknown rather than fail a read that succeeded.
func (a *app) locate(ctx context.Context, c *framework.Client, path string) (inspect.Place, *inspect.Znode) {
	place, z, err := inspect.Locate(ctx, c, path)
	if err != nil {
		return inspect.Place{Layout: inspect.Layout{Path: path}}, nil
	}
	return place, z
}

// writeStat prints st as zkCli does.
func writeStat(w io.Writer, st *zk.Stat) {
	date := func(ms int64) string { return time.UnixMilli(ms).Format("Mon Jan 02 15:04:05 MST 2006") }
	fmt.Fprintf(w, "cZxid = 0x%x\n", st.Czxid)
	fmt.Fprintf(w, "ctime = %s\n", date(st.Ctime))
	fmt.Fprintf(w, "mZxid = 0x%x\n", st.Mzxid)
	fmt.Fprintf(w, "mtime = %s\n", date(st.Mtime))
	fmt.Fprintf(w, "pZxid = 0x%x\n", st.Pzxid)
	fmt.Fprintf(w, "cversion = %d\n", st.Cversion)
	fmt.Fprintf(w, "dataVersion = %d\n", st.Version)
	fmt.Fprintf(w, "aclVersion = %d\n", st.Aversion)
	fmt.Fprintf(w, "ephemeralOwner = %s\n", inspect.SessionHex(st.EphemeralOwner))
	fmt.Fprintf(w, "dataLength = %d\n", st.DataLength)
	fmt.Fprintf(w, "numChildren = %d\n", st.NumChildren)
}

// writeRecipeLine adds "recipe = ..." to a stat block when the path has
// a recipe.
func writeRecipeLine(w io.Writer, p inspect.Place, z *inspect.Znode) {
	if p.Layout.Kind == "" {
		return
	}
	d := describePlace(p, z)
	d = strings.TrimPrefix(strings.TrimPrefix(d, "a "), "an ")
	fmt.Fprintf(w, "recipe = %s\n", d)
}
