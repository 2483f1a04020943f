package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"
	"github.com/spf13/cobra"

	"github.com/gocurator/curator/cmd/internal/inspect"
	"github.com/gocurator/curator/framework"
)

// rmTries bounds atomic rm's attempts: each one fails only when a writer
// came or wrote between its read and its transaction.
const rmTries = 5

// atomicRmDoc is atomic rm's --json document.
type atomicRmDoc struct {
	Path    string `json:"path"`
	Deleted bool   `json:"deleted"`
	// Value is the counter's value when it was deleted, read as a long
	// (8 bytes) or an int (4 bytes) by its length.
	Value int64 `json:"value"`
	// Writers are the writer nodes deleted with it: one per Go handle
	// that had written it and was not closed.
	Writers []atomicWriterDoc `json:"writers"`
}

// atomicWriterDoc is a writer node and its owner session.
type atomicWriterDoc struct {
	Node    string `json:"node"`
	Session string `json:"session"`
}

func (a *app) atomicRmCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "rm PATH",
		Short: "Delete the counter at PATH with its writer nodes, in one transaction",
		Long: `Deletes the distributed atomic counter at PATH. A counter a Go handle
(recipes/atomic) has written has an ephemeral child per handle not yet
closed, "writer-<uuid>", so a plain delete (zkCli's delete, Curator's
delete().forPath) fails with "Node not empty". atomic rm deletes the
writer nodes and the counter in one transaction, made with the counter's
data version: a write between the read and the delete makes it read and
try again (up to 5 times), and nothing is left half deleted.

PATH must look like a counter: 0, 4 or 8 bytes of data and no children
but writer nodes. Anything else is refused with exit 65 and nothing is
deleted. A missing node exits 1. A Go handle still open makes the
counter again, from 0, at its next update, as a Curator handle would.`,
		Example: `  gocurator --zk zk1:2181 atomic rm /counters/orders`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.atomicRm(cmd.Context(), args[0])
		},
	}
}

func (a *app) atomicRm(ctx context.Context, path string) error {
	c, err := a.open(ctx, path)
	if err != nil {
		return err
	}
	defer c.Close()
	rctx, cancel := context.WithTimeout(ctx, a.timeout)
	defer cancel()
	var doc atomicRmDoc
	for try := 1; ; try++ {
		var again bool
		doc, again, err = a.atomicRmOnce(rctx, c, path, try > 1)
		if err != nil {
			return err
		}
		if !again {
			break
		}
		if try == rmTries {
			return fmt.Errorf("%s: written or joined by another writer during each of %d tries; nothing deleted: try again", path, rmTries)
		}
	}
	if a.json {
		return writeJSON(a.stdout, doc, false)
	}
	fmt.Fprintf(a.stdout, "deleted %s (value %d, %s)\n", path, doc.Value, plural(len(doc.Writers), "writer node"))
	return nil
}

// atomicRmOnce reads the counter and deletes it with its writer nodes in
// one transaction; again is true when the counter changed meanwhile. A
// node gone by a later try was deleted (by our own lost reply, or by
// someone else): it is reported deleted, with what the first read saw.
func (a *app) atomicRmOnce(ctx context.Context, c *framework.Client, path string, retried bool) (doc atomicRmDoc, again bool, err error) {
	z, err := inspect.Load(ctx, c, path, 1)
	if errors.Is(err, zk.ErrNoNode) && retried {
		return atomicRmDoc{Path: path, Deleted: true, Writers: []atomicWriterDoc{}}, false, nil
	}
	if err != nil {
		return doc, false, a.describe(path, err)
	}
	if err := a.checkCounter(ctx, c, path, z); err != nil {
		return doc, false, err
	}
	doc = atomicRmDoc{Path: path, Deleted: true, Writers: []atomicWriterDoc{}}
	doc.Value, _ = decodeAtomic(z.Data, len(z.Data) == 4)
	ops := make([]framework.Op, 0, len(z.Children)+1)
	for _, w := range z.Children {
		node := framework.JoinPath(path, w.Name)
		ops = append(ops, framework.DeleteOp(node, -1))
		doc.Writers = append(doc.Writers, atomicWriterDoc{Node: node, Session: inspect.SessionHex(w.Owner)})
	}
	ops = append(ops, framework.DeleteOp(path, z.Version))
	_, err = c.Multi(ctx, ops...)
	switch {
	case err == nil:
		return doc, false, nil
	case errors.Is(err, zk.ErrNotEmpty), errors.Is(err, zk.ErrBadVersion), errors.Is(err, zk.ErrNoNode):
		return doc, true, nil
	default:
		return doc, false, a.describe(path, err)
	}
}

// checkCounter refuses (exit 65) a node that is no counter: data other
// than 0, 4 or 8 bytes, or a child that is not a writer node.
func (a *app) checkCounter(ctx context.Context, c *framework.Client, path string, z *inspect.Znode) error {
	ok := inspect.CounterData(z.Data)
	for _, w := range z.Children {
		ok = ok && inspect.IsWriterName(w.Name) && w.IsEphemeral()
	}
	if ok {
		return nil
	}
	place, lz := a.locate(ctx, c, path)
	if lz == nil {
		lz = z
	}
	return wrongKind(path, place, lz, "an atomic counter", "nothing deleted")
}
