package main

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/spf13/cobra"

	"github.com/gocurator/curator/cmd/internal/inspect"
	"github.com/gocurator/curator/framework"
)

// atomicDoc is atomic get's --json document.
type atomicDoc struct {
	Path string `json:"path"`
	// Type is "long" (Curator's DistributedAtomicLong, 8 bytes) or "int"
	// (DistributedAtomicInteger, 4 bytes), as --int says.
	Type string `json:"type"`
	// Value is the number, read as Curator reads it: big-endian, 0 for a
	// missing node or empty data, bytes past the number ignored.
	Value int64 `json:"value"`
	// Exists is false when the node is missing (Curator reads 0).
	Exists bool `json:"exists"`
	// Version is the node's data version: the number of writes since it
	// was made.
	Version int32 `json:"version"`
	// Modified is when the value was last written; nil for a missing node.
	Modified *time.Time `json:"modified,omitempty"`
	// Bytes is the length of the node's data.
	Bytes int `json:"bytes"`
}

func (a *app) atomicCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "atomic",
		Short: "Read and remove distributed atomic counters (Curator's DistributedAtomicLong and DistributedAtomicInteger)",
	}
	var asInt bool
	get := &cobra.Command{
		Use:   "get PATH",
		Short: "Print the counter at PATH",
		Long: `Prints the value of the distributed atomic counter at PATH as Curator (and
recipes/atomic) reads it: the node's data as an 8-byte big-endian signed long
(DistributedAtomicLong), or with --int a 4-byte one (DistributedAtomicInteger).
A missing node or empty data is 0, as Curator reads it (a note on stderr says
the node is missing); data shorter than the number is an error (exit 1, the
corruption Curator reports); bytes past the number are ignored, as Curator
ignores them. A node with children other than writer nodes (a group's or a
lock's directory, say) is refused with exit 65. With --json it also prints the node's data version (the number
of writes) and when it was last written.`,
		Example: `  gocurator --zk zk1:2181 atomic get /counters/orders
  gocurator --zk zk1:2181 --json atomic get /counters/slots --int`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.atomicGet(cmd.Context(), args[0], asInt)
		},
	}
	get.Flags().BoolVar(&asInt, "int", false, "read a DistributedAtomicInteger (4 bytes) rather than a DistributedAtomicLong (8)")
	cmd.AddCommand(get, a.atomicRmCommand())
	return cmd
}

func (a *app) atomicGet(ctx context.Context, path string, asInt bool) error {
	c, err := a.open(ctx, path)
	if err != nil {
		return err
	}
	defer c.Close()
	rctx, cancel := context.WithTimeout(ctx, a.timeout)
	defer cancel()
	data, st, err := c.Get(rctx, path)
	doc := atomicDoc{Path: path, Type: "long"}
	if asInt {
		doc.Type = "int"
	}
	switch {
	case errors.Is(err, zk.ErrNoNode):
	case err != nil:
		return a.describe(path, err)
	case st.NumChildren > 0 && !a.onlyWriters(rctx, c, path):
		place, z := a.locate(rctx, c, path)
		return wrongKind(path, place, z, "an atomic counter", "")
	default:
		modified := time.UnixMilli(st.Mtime).UTC()
		doc.Exists, doc.Version, doc.Modified, doc.Bytes = true, st.Version, &modified, len(data)
	}
	if doc.Value, err = decodeAtomic(data, asInt); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if a.json {
		return writeJSON(a.stdout, doc, false)
	}
	fmt.Fprintln(a.stdout, doc.Value)
	writeAtomicNotes(a.stderr, doc, asInt)
	return nil
}

// decodeAtomic reads a counter as Curator does: empty is 0, shorter than
// the number is an error, the rest is ignored.
func decodeAtomic(data []byte, asInt bool) (int64, error) {
	size := 8
	if asInt {
		size = 4
	}
	switch {
	case len(data) == 0:
		return 0, nil
	case len(data) < size:
		hint := ""
		if !asInt && len(data) >= 4 {
			hint = " (a DistributedAtomicInteger? try --int)"
		}
		return 0, fmt.Errorf("not a counter: %d bytes of data, want %d%s", len(data), size, hint)
	case asInt:
		return int64(int32(binary.BigEndian.Uint32(data))), nil
	default:
		return int64(binary.BigEndian.Uint64(data)), nil
	}
}

// writeAtomicNotes says on w what an operator may not expect: a missing
// node read as 0, data longer than the number.
func writeAtomicNotes(w io.Writer, doc atomicDoc, asInt bool) {
	switch {
	case !doc.Exists:
		fmt.Fprintf(w, "gocurator: note: %s does not exist; Curator reads it as 0\n", doc.Path)
	case !asInt && doc.Bytes > 8, asInt && doc.Bytes > 4:
		fmt.Fprintf(w, "gocurator: note: %s holds %d bytes; the counter is the first %s\n", doc.Path, doc.Bytes, map[bool]string{true: "4", false: "8"}[asInt])
	}
}

// onlyWriters reports whether every child of path is a writer node (a Go
// handle's): a node with other children is some other recipe's directory,
// whose empty data would read as a counter at 0. What cannot be read is
// given the benefit of the doubt.
func (a *app) onlyWriters(ctx context.Context, c *framework.Client, path string) bool {
	names, _, err := c.Children(ctx, path)
	if err != nil {
		return true
	}
	for _, n := range names {
		if !inspect.IsWriterName(n) {
			return false
		}
	}
	return true
}
