package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/gocurator/curator/cmd/internal/inspect"
	"github.com/gocurator/curator/recipes/cache"
)

func (a *app) treeCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "tree",
		Short: "Look at a subtree of znodes",
	}
	cmd.AddCommand(a.treeWatchCommand())
	return cmd
}

// treeWatchOptions are tree watch's flags.
type treeWatchOptions struct {
	depth      int
	updates    int
	compressed bool
	// lasting, if positive, ends the watch (exit 0) after that long.
	lasting time.Duration
}

func (a *app) treeWatchCommand() *cobra.Command {
	var o treeWatchOptions
	cmd := &cobra.Command{
		Use:   "watch PATH",
		Short: "Print PATH's subtree, then every change to it, live",
		Long: `Loads PATH and every node below it into a cache (recipes/cache: one
persistent recursive watch on ZooKeeper 3.6+, one-shot watches on older
servers), prints a line for each node found, then "initialized", then a
line for every node created, changed or deleted, until interrupted
(Ctrl-C or SIGTERM, exit 0), until --updates N changes after
"initialized", or until --for D has passed, whichever comes first.

Each line has the time, the event, the path, and for a node its data
version, its data length and a preview of its data (printable text up to
60 characters). After a reconnection or a new session the cache reads the
tree again, prints what changed meanwhile, then "resynced" and why.
A node this client may not read is printed as "unreadable".

With --json, one JSON document per line: time, event (created, changed,
deleted, initialized, resynced, unreadable), path, and for a node version,
data_length, data (a string when the data is UTF-8, else data_base64),
czxid, mzxid, mtime, ephemeral_owner (hex, for an ephemeral node) and
coalesced (the view skipped intermediate steps of a fast-changing node);
nodes for initialized and resynced; reason for resynced; error for
unreadable.`,
		Example: `  gocurator --zk zk1:2181 tree watch /app/config
  gocurator --zk zk1:2181 --json tree watch /services --depth 2
  gocurator --zk zk1:2181 tree watch /app/config --for 5m`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.depth < 0 || o.updates < 0 || o.lasting < 0 {
				return usageError{errors.New("--depth, --updates and --for must not be negative")}
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return a.treeWatch(ctx, args[0], o)
		},
	}
	cmd.Flags().IntVar(&o.depth, "depth", 0, "levels below PATH to watch (0: all)")
	cmd.Flags().IntVar(&o.updates, "updates", 0, "stop after this many changes after initialized (0: until interrupted)")
	cmd.Flags().DurationVar(&o.lasting, "for", 0, "stop after this long, exit 0 (0: until interrupted)")
	cmd.Flags().BoolVar(&o.compressed, "compressed", false, "the data is gzip-compressed (Curator's GzipCompressionProvider): show it uncompressed")
	return cmd
}

func (a *app) treeWatch(ctx context.Context, path string, o treeWatchOptions) error {
	c, err := a.open(ctx, path)
	if err != nil {
		return err
	}
	defer c.Close()
	// --for counts from the connection: the end of a watch that never
	// began would read as a connection failure.
	if o.lasting > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.lasting)
		defer cancel()
	}
	var opts []cache.Option
	if o.depth > 0 {
		opts = append(opts, cache.WithMaxDepth(o.depth))
	}
	if o.compressed {
		opts = append(opts, cache.CompressedData())
	}
	cc := cache.New(c, path, opts...)
	defer cc.Close()
	// The listener only hands events over, in order: the printing, and
	// its errors, stay on this goroutine. Bounded by the paths in the
	// tree: the cache coalesces per path for a slow listener.
	events := make(chan cache.Event, 256)
	stopped := make(chan struct{})
	cancel := cc.Listen(func(ev cache.Event) {
		select {
		case events <- ev:
		case <-stopped:
		}
	})
	defer cancel()
	// First of the deferred calls: a listener waiting to hand an event
	// over returns, so that cancel and Close, which wait for it, do not.
	defer close(stopped)
	started := make(chan error, 1)
	go func() { started <- cc.Start(ctx) }()
	changes := 0
	initialized := false
	for {
		select {
		case err := <-started:
			started = nil
			if err != nil {
				if ctx.Err() != nil {
					return nil // interrupted before the load was done
				}
				return a.describe(path, err)
			}
		case ev := <-events:
			if err := a.printTreeEvent(ev, cc.Len()); err != nil {
				return err
			}
			switch ev.Type {
			case cache.Initialized:
				initialized = true
			case cache.Created, cache.Changed, cache.Deleted:
				if initialized {
					changes++
				}
			}
			if o.updates > 0 && changes >= o.updates {
				return nil
			}
		case <-c.Done():
			return fmt.Errorf("connection to %s closed", a.zk)
		case <-ctx.Done():
			return nil
		}
	}
}

// treeEventDoc is one --json line of tree watch.
type treeEventDoc struct {
	Time           time.Time  `json:"time"`
	Event          string     `json:"event"`
	Path           string     `json:"path"`
	Version        *int32     `json:"version,omitempty"`
	DataLength     *int       `json:"data_length,omitempty"`
	Data           *string    `json:"data,omitempty"`
	DataBase64     []byte     `json:"data_base64,omitempty"`
	Czxid          int64      `json:"czxid,omitempty"`
	Mzxid          int64      `json:"mzxid,omitempty"`
	Mtime          *time.Time `json:"mtime,omitempty"`
	EphemeralOwner string     `json:"ephemeral_owner,omitempty"`
	Coalesced      bool       `json:"coalesced,omitempty"`
	Nodes          *int       `json:"nodes,omitempty"`
	Reason         string     `json:"reason,omitempty"`
	Error          string     `json:"error,omitempty"`
}

func (a *app) printTreeEvent(ev cache.Event, nodes int) error {
	now := time.Now()
	name := treeEventName(ev.Type)
	if a.json {
		d := treeEventDoc{Time: now, Event: name, Path: ev.Path, Coalesced: ev.Coalesced}
		switch ev.Type {
		case cache.Created, cache.Changed, cache.Deleted:
			n := ev.Node
			v, l := n.Stat.Version, len(n.Data)
			mtime := time.UnixMilli(n.Stat.Mtime).UTC()
			d.Version, d.DataLength, d.Czxid, d.Mzxid, d.Mtime = &v, &l, n.Stat.Czxid, n.Stat.Mzxid, &mtime
			if utf8.Valid(n.Data) {
				s := string(n.Data)
				d.Data = &s
			} else {
				d.DataBase64 = n.Data
			}
			if n.Stat.EphemeralOwner != 0 {
				d.EphemeralOwner = inspect.SessionHex(n.Stat.EphemeralOwner)
			}
		case cache.Initialized, cache.Resynced:
			d.Nodes = &nodes
			if ev.Type == cache.Resynced {
				d.Reason = ev.Reason.String()
			}
		}
		if ev.Err != nil {
			d.Error = ev.Err.Error()
		}
		return writeJSON(a.stdout, d, true)
	}
	line := fmt.Sprintf("%s %-11s %s", now.Format("15:04:05.000"), name, ev.Path)
	switch ev.Type {
	case cache.Created, cache.Changed:
		line += fmt.Sprintf("  v%d %d B", ev.Node.Stat.Version, len(ev.Node.Data))
		if p := preview(ev.Node.Data); p != "" {
			line += "  " + p
		}
		if ev.Node.Stat.EphemeralOwner != 0 {
			line += "  ephemeral " + inspect.SessionHex(ev.Node.Stat.EphemeralOwner)
		}
	case cache.Initialized:
		line += fmt.Sprintf(": %d nodes", nodes)
	case cache.Resynced:
		line += fmt.Sprintf(": %d nodes (%s)", nodes, ev.Reason)
	}
	if ev.Coalesced {
		line += "  (coalesced)"
	}
	if ev.Err != nil {
		line += "  " + ev.Err.Error()
	}
	_, err := fmt.Fprintln(a.stdout, line)
	return err
}

func treeEventName(t cache.EventType) string {
	switch t {
	case cache.Created:
		return "created"
	case cache.Changed:
		return "changed"
	case cache.Deleted:
		return "deleted"
	case cache.Initialized:
		return "initialized"
	case cache.Resynced:
		return "resynced"
	case cache.Unreadable:
		return "unreadable"
	}
	return t.String()
}

// preview is data as a quoted string if it is printable text, cut at 60
// characters; "" for no data or binary data.
func preview(data []byte) string {
	if len(data) == 0 || !utf8.Valid(data) {
		return ""
	}
	s := string(data)
	for _, r := range s {
		if r < ' ' && r != '\t' {
			return ""
		}
	}
	if utf8.RuneCountInString(s) > 60 {
		s = string([]rune(s)[:60]) + "..."
	}
	return strconv.Quote(s)
}
