package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/gocurator/curator/cmd/internal/inspect"
	"github.com/gocurator/curator/framework"
)

// lsEntry is one node ls lists, with its recipe where it has one.
type lsEntry struct {
	Name string `json:"name"`
	Path string `json:"path"`
	recipeDoc
}

// lsDoc is ls's --json document.
type lsDoc struct {
	Path string `json:"path"`
	recipeDoc
	Children []lsEntry `json:"children"`
}

// lsRDoc is ls -R's --json document: every node below PATH, depth
// first in name order.
type lsRDoc struct {
	Path string `json:"path"`
	recipeDoc
	Nodes []lsEntry `json:"nodes"`
}

func (a *app) lsCommand() *cobra.Command {
	var recursive bool
	cmd := &cobra.Command{
		Use:   "ls PATH",
		Short: "List the children of the node at PATH (-R: every node below it), as zkCli's ls, with their recipes",
		Long: `Lists the children of the node at PATH, one name per line, sorted; with -R
every node at and below PATH, one full path per line, depth first (zkCli's
ls and ls -R). A node that is a recipe gocurator recognises is followed by
its kind (mutex, read-write, semaphore-v2, latch, group, service,
service-discovery, counter, double-barrier, queue, simple-queue), and a
node of a recipe by the recipe's kind and its part in it ("mutex
participant", "group member", "semaphore-v2 gate", "counter writer").
To name them, ls reads two levels below PATH. Exit 0, or 1 when the node
does not exist.

With --json: {"path", "kind", "part", "recipe", "children": [{"name",
"path", "kind", "part", "recipe"}]}; with -R "nodes" instead of
"children", every node below PATH.`,
		Example: `  gocurator --zk zk1:2181 ls /
  gocurator --zk zk1:2181 ls -R /locks
  gocurator --zk zk1:2181 --json ls /services | jq -r '.children[].name'`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.ls(cmd.Context(), args[0], recursive)
		},
	}
	cmd.Flags().BoolVarP(&recursive, "recursive", "R", false, "list every node below PATH, as zkCli's ls -R")
	return cmd
}

func (a *app) ls(ctx context.Context, path string, recursive bool) error {
	c, err := a.open(ctx, path)
	if err != nil {
		return err
	}
	defer c.Close()
	rctx, cancel := context.WithTimeout(ctx, a.timeout)
	defer cancel()
	depth := 3 // the children, and two levels below them to name their recipes
	if recursive {
		depth = -1
	}
	z, err := inspect.Load(rctx, c, path, depth)
	if err != nil {
		return a.describe(path, err)
	}
	place := inspect.Place{Layout: inspect.Identify(path, z)}
	if place.Layout.Kind == "" {
		place, _ = a.locate(rctx, c, path)
	}
	top := newRecipeDoc(place)
	if !recursive {
		doc := lsDoc{Path: path, recipeDoc: top, Children: []lsEntry{}}
		for _, ch := range z.Children {
			doc.Children = append(doc.Children, entryOf(path, place, ch))
		}
		if a.json {
			return writeJSON(a.stdout, doc, false)
		}
		for _, e := range doc.Children {
			writeLsLine(a.stdout, e.Name, e.recipeDoc)
		}
		return nil
	}
	doc := lsRDoc{Path: path, recipeDoc: top, Nodes: []lsEntry{}}
	var walk func(p string, pl inspect.Place, z *inspect.Znode)
	walk = func(p string, pl inspect.Place, z *inspect.Znode) {
		for _, ch := range z.Children {
			e := entryOf(p, pl, ch)
			doc.Nodes = append(doc.Nodes, e)
			walk(e.Path, placeOf(p, pl, ch), ch)
		}
	}
	walk(path, place, z)
	if a.json {
		return writeJSON(a.stdout, doc, false)
	}
	writeLsLine(a.stdout, path, top)
	for _, e := range doc.Nodes {
		writeLsLine(a.stdout, e.Path, e.recipeDoc)
	}
	return nil
}

// placeOf says what child ch of the node at dir (which is parent) is: a
// node of parent's recipe (or of the V2 semaphore above a gate or leases
// directory), else a recipe of its own, else nothing.
func placeOf(dir string, parent inspect.Place, ch *inspect.Znode) inspect.Place {
	path := framework.JoinPath(dir, ch.Name)
	l := parent.Layout
	switch {
	case parent.Part == "" && l.Parts[ch.Name] != "":
		return inspect.Place{Layout: l, Part: l.Parts[ch.Name]}
	case inspect.IsStructural(parent.Part):
		for _, lk := range l.Locks {
			for _, p := range append(append([]inspect.Participant{}, lk.Holders...), lk.Waiters...) {
				if p.Node == path {
					return inspect.Place{Layout: l, Part: inspect.PartParticipant}
				}
			}
		}
	}
	return inspect.Place{Layout: inspect.Identify(path, ch)}
}

func entryOf(dir string, parent inspect.Place, ch *inspect.Znode) lsEntry {
	return lsEntry{Name: ch.Name, Path: framework.JoinPath(dir, ch.Name), recipeDoc: newRecipeDoc(placeOf(dir, parent, ch))}
}

// writeLsLine prints a name and, after two spaces, its recipe kind and
// part, if any.
func writeLsLine(w io.Writer, name string, r recipeDoc) {
	switch {
	case r.Part != "":
		fmt.Fprintf(w, "%s  %s %s\n", name, r.Kind, r.Part)
	case r.Kind != "":
		fmt.Fprintf(w, "%s  %s\n", name, r.Kind)
	default:
		fmt.Fprintln(w, name)
	}
}
