package main

import (
	"bytes"
	"context"
	"fmt"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/gocurator/curator/cmd/internal/inspect"
	"github.com/gocurator/curator/framework"
)

// gzipMagic starts gzip data (RFC 1952: ID1, ID2, CM deflate).
var gzipMagic = []byte{0x1f, 0x8b, 0x08}

// getDoc is get's --json document.
type getDoc struct {
	Path string `json:"path"`
	// Data is the node's data when it is text (UTF-8 without control
	// characters but tab, CR and LF; uncompressed first, when
	// Compressed); DataBase64 holds it otherwise. Neither for no data.
	Data       *string `json:"data,omitempty"`
	DataBase64 []byte  `json:"data_base64,omitempty"`
	// Compressed is true when the stored data was gzip (Curator's
	// GzipCompressionProvider) and Data is what it uncompresses to.
	Compressed bool `json:"compressed"`
	// StoredLength is the length of the data as stored.
	StoredLength int     `json:"stored_length"`
	Stat         statDoc `json:"stat"`
	recipeDoc
}

// getOptions are get's flags.
type getOptions struct {
	stat bool
	raw  bool
}

func (a *app) getCommand() *cobra.Command {
	var o getOptions
	cmd := &cobra.Command{
		Use:   "get PATH",
		Short: "Print the data of the node at PATH (uncompressed when gzip), as zkCli's get",
		Long: `Prints the data of the node at PATH, as zkCli's get does. Data compressed
with gzip (Curator's GzipCompressionProvider, framework.Compressed) is
printed uncompressed, with a note on stderr; --raw prints it as stored.
Text (UTF-8 without control characters) gets a final newline if it has
none; other data is written as it is.
With -s (--stat), zkCli's stat block follows the data. When PATH is a
recipe gocurator recognises, or one of a recipe's nodes, a note on stderr
(or "recipe = ..." in the stat block) says which. Exit 0, or 1 when the
node does not exist.

With --json: {"path", "data" (a string when text, else "data_base64"),
"compressed", "stored_length", "stat" (as stat --json), "kind", "part",
"recipe"}.`,
		Example: `  gocurator --zk zk1:2181 get /config/orders
  gocurator --zk zk1:2181 get -s /locks/orders
  gocurator --zk zk1:2181 --json get /config/orders | jq -r .data`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.get(cmd.Context(), args[0], o)
		},
	}
	cmd.Flags().BoolVarP(&o.stat, "stat", "s", false, "print the node's stat after its data, as zkCli's get -s")
	cmd.Flags().BoolVar(&o.raw, "raw", false, "print gzip data as stored, not uncompressed")
	return cmd
}

func (a *app) get(ctx context.Context, path string, o getOptions) error {
	c, err := a.open(ctx, path)
	if err != nil {
		return err
	}
	defer c.Close()
	rctx, cancel := context.WithTimeout(ctx, a.timeout)
	defer cancel()
	stored, st, err := c.Get(rctx, path, framework.Uncompressed())
	if err != nil {
		return a.describe(path, err)
	}
	data, compressed := stored, false
	if !o.raw && bytes.HasPrefix(stored, gzipMagic) {
		if plain, err := framework.Gzip().Decompress(path, stored); err == nil {
			data, compressed = plain, true
		}
	}
	place, z := a.locate(rctx, c, path)
	if a.json {
		d := getDoc{Path: path, Compressed: compressed, StoredLength: len(stored), Stat: newStatDoc(st), recipeDoc: newRecipeDoc(place)}
		switch {
		case len(data) == 0:
		case isText(data):
			s := string(data)
			d.Data = &s
		default:
			d.DataBase64 = data
		}
		return writeJSON(a.stdout, d, false)
	}
	out := data
	if len(data) > 0 && isText(data) && data[len(data)-1] != '\n' {
		out = append(append([]byte{}, data...), '\n')
	}
	if _, err := a.stdout.Write(out); err != nil {
		return err
	}
	if compressed {
		fmt.Fprintf(a.stderr, "gocurator: note: %s holds gzip data (%d bytes stored), shown uncompressed; --raw prints it as stored\n", path, len(stored))
	}
	if o.stat {
		writeStat(a.stdout, st)
		writeRecipeLine(a.stdout, place, z)
	} else if place.Layout.Kind != "" {
		fmt.Fprintf(a.stderr, "gocurator: note: %s is %s%s\n", path, describePlace(place, z), counterNote(place, stored))
	}
	return nil
}

// counterNote gives a counter's value, which its binary data hides.
func counterNote(p inspect.Place, data []byte) string {
	if p.Part != "" || p.Layout.Kind != inspect.KindCounter {
		return ""
	}
	v, err := decodeAtomic(data, len(data) == 4)
	if err != nil {
		return ""
	}
	return fmt.Sprintf(", value %d (see gocurator atomic get %s)", v, p.Layout.Path)
}

// isText reports whether data is UTF-8 text: no control characters but
// tab, CR and LF.
func isText(data []byte) bool {
	if !utf8.Valid(data) {
		return false
	}
	for _, r := range string(data) {
		if r < ' ' && r != '\t' && r != '\n' && r != '\r' || r == 0x7f {
			return false
		}
	}
	return true
}
