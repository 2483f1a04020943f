package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/go-zookeeper/zk"
	"github.com/spf13/cobra"

	"github.com/gocurator/curator/cmd/internal/inspect"
	"github.com/gocurator/curator/framework"
)

// queueEmpty is the kind of a queue path with no item.
const queueEmpty = "empty"

// queueDoc is queue ls's --json document.
type queueDoc struct {
	Path string `json:"path"`
	// Kind is the variant read from the item names: queue, id-queue,
	// priority-queue, delay-queue, simple-queue; "empty" for a node with
	// no item.
	Kind string `json:"kind"`
	// Nodes counts the item nodes; Items the items in them (a putMulti
	// node holds several; a node that does not decode counts none, and
	// is counted in Corrupt).
	Nodes   int `json:"nodes"`
	Items   int `json:"items"`
	Corrupt int `json:"corrupt,omitempty"`
	// Oldest is when the oldest item node was made (its ctime).
	Oldest           *time.Time `json:"oldest,omitempty"`
	OldestAgeSeconds float64    `json:"oldestAgeSeconds,omitempty"`
	// LockPath is the lock-safety mode's lock path, given or found beside
	// the queue; "" when none is known.
	LockPath string `json:"lockPath,omitempty"`
	// Locked are the items being consumed now, by whom.
	Locked []queueLockDoc `json:"locked"`
	// Sessions is as in locks ls: "complete" when every server answered
	// cons, else "unknown".
	Sessions string `json:"sessions,omitempty"`
}

// queueLockDoc is an item's lock node: the consumer on it.
type queueLockDoc struct {
	Item      string `json:"item"`
	Session   string `json:"session"`
	Host      string `json:"host,omitempty"`
	Connected string `json:"connected"`
	// Since is when the lock node was made.
	Since time.Time `json:"since"`
	owner int64
}

// queuePeekDoc is queue peek's --json document.
type queuePeekDoc struct {
	Path string `json:"path"`
	Kind string `json:"kind"`
	// Items are the first -n items in the order consumers take them.
	Items []queueItemDoc `json:"items"`
	// Total counts the queue's items.
	Total    int    `json:"total"`
	LockPath string `json:"lockPath,omitempty"`
}

// queueItemDoc is one item.
type queueItemDoc struct {
	Node string `json:"node"`
	// Index is the item's place in its node, of Count (a putMulti node).
	Index int `json:"index"`
	Count int `json:"count"`
	// Data is the item (base64 in JSON); Text the same when it is UTF-8.
	Data []byte  `json:"data"`
	Text *string `json:"text,omitempty"`
	// Corrupt is set on a node that is not Curator's item framing (Data
	// is then the node's bytes).
	Corrupt    bool       `json:"corrupt,omitempty"`
	Created    time.Time  `json:"created"`
	AgeSeconds float64    `json:"ageSeconds"`
	ID         *string    `json:"id,omitempty"`
	Priority   *int32     `json:"priority,omitempty"`
	Due        *time.Time `json:"due,omitempty"`
	// Locked names the consumer on it, when there is a lock path.
	Locked *queueLockDoc `json:"locked,omitempty"`
}

func (a *app) queueCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "queue",
		Short: "Inspect distributed queues (Curator's DistributedQueue family, recipes/queue)",
	}
	var lockPath string
	ls := &cobra.Command{
		Use:   "ls PATH",
		Short: "Show the queue at PATH: its kind, depth, oldest item and locked items",
		Long: `Shows the queue at PATH: its kind, read from the item names (queue,
id-queue, priority-queue, delay-queue for Curator's DistributedQueue family,
simple-queue for SimpleDistributedQueue), how many item nodes and items it
holds (a putMulti node holds several), the age of its oldest node, and the
items being consumed in lock-safety mode: each with the consumer's session,
its host (the lock node's data) and whether that session is still connected
(from the servers' "cons", as locks ls).

The lock path is wherever the queue's users put it: give it with
--lock-path, or it is looked for among the queue's siblings (a node whose
ephemeral children are named as the queue's items). A path that holds
something else is refused with exit 65.`,
		Example: `  gocurator --zk zk1:2181 queue ls /jobs
  gocurator --zk zk1:2181 --json queue ls /jobs --lock-path /jobs-locks`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.queueLs(cmd.Context(), args[0], lockPath)
		},
	}
	ls.Flags().StringVar(&lockPath, "lock-path", "", "the queue's lock path (lock-safety mode)")
	var n int
	peek := &cobra.Command{
		Use:   "peek PATH",
		Short: "Show the first items of the queue at PATH, in the order consumers take them",
		Long: `Shows the first -n items of the queue at PATH in the order its consumers
take them (sequence; priority then sequence; time then sequence), without
taking them: each with its node, its place in a putMulti node, its age, its
id, priority or time when the kind has one, whether a consumer holds it
(lock-safety mode, as queue ls finds the lock path) and its data (quoted
text, or the byte count; --json gives the bytes in base64). A node that is
not Curator's item framing is shown as corrupt.`,
		Example: `  gocurator --zk zk1:2181 queue peek /jobs
  gocurator --zk zk1:2181 --json queue peek /jobs -n 100 | jq -r '.items[].text'`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if n < 1 {
				return usageError{fmt.Errorf("-n %d: must be at least 1", n)}
			}
			return a.queuePeek(cmd.Context(), args[0], lockPath, n)
		},
	}
	peek.Flags().IntVarP(&n, "n", "n", 10, "how many items to show")
	peek.Flags().StringVar(&lockPath, "lock-path", "", "the queue's lock path (lock-safety mode)")
	cmd.AddCommand(ls, peek)
	return cmd
}

// queueView is a queue as read: its items in consumption order, and the
// lock nodes of those in work.
type queueView struct {
	path     string
	kind     string
	items    []inspect.QueueItem
	nodes    map[string]*inspect.Znode
	lockPath string
	locks    map[string]*queueLockDoc
	sessions *inspect.Sessions
}

// readQueue reads the queue at path (refusing, exit 65, a path that is
// no queue), finds its lock path and asks who holds the locks.
func (a *app) readQueue(ctx context.Context, c *framework.Client, path, lockPath string) (*queueView, error) {
	place, z, err := inspect.Locate(ctx, c, path)
	if errors.Is(err, zk.ErrNoNode) {
		return nil, fmt.Errorf("%s: no such node: no queue there", path)
	}
	if err != nil {
		return nil, a.describe(path, err)
	}
	empty := place.Layout.Kind == "" && place.Part == "" && !z.IsEphemeral() && len(z.Children) == 0
	isQueue := place.Part == "" && (place.Layout.Kind == inspect.KindQueue || place.Layout.Kind == inspect.KindSimpleQueue)
	if !empty && !isQueue {
		return nil, wrongKind(path, place, z, "a queue", "")
	}
	v := &queueView{path: path, kind: queueEmpty, nodes: map[string]*inspect.Znode{}, locks: map[string]*queueLockDoc{}}
	for _, ch := range z.Children {
		if it, ok := inspect.ParseQueueItem(ch.Name); ok {
			v.items = append(v.items, it)
			v.nodes[ch.Name] = ch
		}
	}
	switch {
	case place.Layout.Kind == inspect.KindSimpleQueue:
		v.kind = inspect.KindSimpleQueue
	case len(v.items) > 0:
		v.kind = inspect.QueueVariant(v.items)
	}
	inspect.SortQueue(v.kind, v.items)
	if v.kind == inspect.KindSimpleQueue {
		return v, nil // SimpleDistributedQueue has no locks
	}
	if lockPath != "" {
		if err := checkPath(lockPath); err != nil {
			return nil, err
		}
		v.lockPath = lockPath
	} else {
		v.lockPath = a.findLockPath(ctx, c, path, v.nodes)
	}
	if v.lockPath == "" {
		return v, nil
	}
	lz, err := inspect.Load(ctx, c, v.lockPath, 1)
	if errors.Is(err, zk.ErrNoNode) {
		return v, nil
	}
	if err != nil {
		return nil, a.describe(v.lockPath, err)
	}
	for _, l := range lz.Children {
		if _, ok := v.nodes[l.Name]; !ok || !l.IsEphemeral() {
			continue
		}
		d := &queueLockDoc{Item: l.Name, Session: inspect.SessionHex(l.Owner), Since: l.Ctime, owner: l.Owner}
		if s := string(l.Data); utf8.ValidString(s) && len(s) <= 255 && !strings.ContainsAny(s, "\n\r\t") {
			d.Host = s
		}
		v.locks[l.Name] = d
	}
	if len(v.locks) > 0 {
		v.sessions = inspect.QuerySessions(ctx, inspect.Servers(a.zk), a.timeout)
		for _, d := range v.locks {
			d.Connected, _ = v.sessions.State(d.owner)
		}
	}
	return v, nil
}

// findLockPath looks among path's siblings for the queue's lock path: the
// one whose ephemeral children are named as the most of its items. ""
// when none is (an idle lock path cannot be told from any empty node).
func (a *app) findLockPath(ctx context.Context, c *framework.Client, path string, items map[string]*inspect.Znode) string {
	if len(items) == 0 || path == "/" {
		return ""
	}
	parent, name := framework.SplitPath(path)
	siblings, _, err := c.Children(ctx, parent)
	if err != nil {
		return ""
	}
	best, most := "", 0
	for _, s := range siblings {
		if s == name {
			continue
		}
		p := framework.JoinPath(parent, s)
		z, err := inspect.Load(ctx, c, p, 1)
		if err != nil || inspect.Identify(p, z).Kind != inspect.KindQueueLock {
			continue
		}
		n := 0
		for _, l := range z.Children {
			if items[l.Name] != nil {
				n++
			}
		}
		if n > most {
			best, most = p, n
		}
	}
	return best
}

func (a *app) queueLs(ctx context.Context, path, lockPath string) error {
	c, err := a.open(ctx, path)
	if err != nil {
		return err
	}
	defer c.Close()
	rctx, cancel := context.WithTimeout(ctx, a.timeout)
	defer cancel()
	v, err := a.readQueue(rctx, c, path, lockPath)
	if err != nil {
		return err
	}
	now := time.Now()
	doc := queueDoc{Path: path, Kind: v.kind, Nodes: len(v.items), LockPath: v.lockPath, Locked: []queueLockDoc{}}
	for _, it := range v.items {
		z := v.nodes[it.Name]
		if doc.Oldest == nil || z.Ctime.Before(*doc.Oldest) {
			t := z.Ctime
			doc.Oldest = &t
		}
		if v.kind == inspect.KindSimpleQueue {
			doc.Items++
			continue
		}
		its, err := inspect.DecodeQueueItems(z.Data)
		if err != nil {
			doc.Corrupt++
		}
		doc.Items += len(its)
	}
	if doc.Oldest != nil {
		doc.OldestAgeSeconds = now.Sub(*doc.Oldest).Seconds()
	}
	for _, it := range v.items {
		if l := v.locks[it.Name]; l != nil {
			doc.Locked = append(doc.Locked, *l)
		}
	}
	if v.sessions != nil {
		doc.Sessions = sessionsState(v.sessions)
	}
	if a.json {
		return writeJSON(a.stdout, doc, false)
	}
	writeQueue(a.stdout, doc, now)
	if v.sessions != nil {
		warnSessions(a.stderr, v.sessions)
	}
	return nil
}

func writeQueue(w io.Writer, d queueDoc, now time.Time) {
	var b strings.Builder
	fmt.Fprintf(&b, "%s  %s  %s", d.Path, d.Kind, plural(d.Items, "item"))
	if d.Nodes != d.Items {
		fmt.Fprintf(&b, " in %s", plural(d.Nodes, "node"))
	}
	if d.Corrupt > 0 {
		fmt.Fprintf(&b, " (%d corrupt)", d.Corrupt)
	}
	if d.Oldest != nil {
		fmt.Fprintf(&b, ", oldest %s", since(now, *d.Oldest))
	}
	switch {
	case d.Kind == inspect.KindSimpleQueue || d.Nodes == 0:
	case d.LockPath == "":
		b.WriteString(", lock path unknown (see --lock-path)")
	default:
		fmt.Fprintf(&b, ", %d locked (lock path %s)", len(d.Locked), d.LockPath)
	}
	fmt.Fprintln(w, b.String())
	if len(d.Locked) == 0 {
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  LOCKED ITEM\tSESSION\tHOST\tCONNECTED\tFOR")
	for _, l := range d.Locked {
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", l.Item, l.Session, dash(l.Host), l.Connected, since(now, l.Since))
	}
	_ = tw.Flush()
}

func (a *app) queuePeek(ctx context.Context, path, lockPath string, n int) error {
	c, err := a.open(ctx, path)
	if err != nil {
		return err
	}
	defer c.Close()
	rctx, cancel := context.WithTimeout(ctx, a.timeout)
	defer cancel()
	v, err := a.readQueue(rctx, c, path, lockPath)
	if err != nil {
		return err
	}
	now := time.Now()
	doc := queuePeekDoc{Path: path, Kind: v.kind, Items: []queueItemDoc{}, LockPath: v.lockPath}
	for _, it := range v.items {
		z := v.nodes[it.Name]
		base := queueItemDoc{Node: it.Name, Count: 1, Created: z.Ctime, AgeSeconds: now.Sub(z.Ctime).Seconds(), Locked: v.locks[it.Name]}
		switch {
		case v.kind == inspect.QueueID && it.HasID:
			base.ID = &it.ID
		case v.kind == inspect.QueuePriority && it.HasPriority:
			base.Priority = &it.Priority
		case v.kind == inspect.QueueDelay && it.HasDue:
			base.Due = &it.Due
		}
		datas := [][]byte{z.Data}
		if v.kind != inspect.KindSimpleQueue {
			var err error
			if datas, err = inspect.DecodeQueueItems(z.Data); err != nil {
				datas, base.Corrupt = [][]byte{z.Data}, true
			}
		}
		for i, data := range datas {
			doc.Total++
			if len(doc.Items) == n {
				continue
			}
			d := base
			d.Index, d.Data = i, nonNilBytes(data)
			if !d.Corrupt {
				d.Count = len(datas)
			}
			if utf8.Valid(data) {
				s := string(data)
				d.Text = &s
			}
			doc.Items = append(doc.Items, d)
		}
	}
	if a.json {
		return writeJSON(a.stdout, doc, false)
	}
	writePeek(a.stdout, doc, now)
	if v.sessions != nil {
		warnSessions(a.stderr, v.sessions)
	}
	return nil
}

func nonNilBytes(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// peekText is how peek shows an item's data in its table.
func peekText(d queueItemDoc) string {
	const max = 60
	switch {
	case d.Corrupt:
		return fmt.Sprintf("(corrupt: %d bytes, not Curator's item framing)", len(d.Data))
	case d.Text == nil:
		return fmt.Sprintf("(%d bytes, not UTF-8)", len(d.Data))
	case len(*d.Text) > max:
		return fmt.Sprintf("%q... (%d bytes)", (*d.Text)[:max], len(d.Data))
	}
	return fmt.Sprintf("%q", *d.Text)
}

func writePeek(w io.Writer, d queuePeekDoc, now time.Time) {
	fmt.Fprintf(w, "%s  %s  %d of %s\n", d.Path, d.Kind, len(d.Items), plural(d.Total, "item"))
	if len(d.Items) == 0 {
		return
	}
	extra := map[string]string{inspect.QueueID: "ID", inspect.QueuePriority: "PRIORITY", inspect.QueueDelay: "DUE"}[d.Kind]
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head := "  NODE\tITEM\tAGE\t"
	if extra != "" {
		head += extra + "\t"
	}
	fmt.Fprintln(tw, head+"LOCKED BY\tDATA")
	for _, it := range d.Items {
		row := fmt.Sprintf("  %s\t%d/%d\t%s\t", it.Node, it.Index+1, it.Count, since(now, it.Created))
		switch {
		case it.ID != nil:
			row += dash(*it.ID) + "\t"
		case it.Priority != nil:
			row += fmt.Sprint(*it.Priority) + "\t"
		case it.Due != nil:
			due := "in " + inspect.FormatAge(it.Due.Sub(now).Seconds())
			if !it.Due.After(now) {
				due = "due"
			}
			row += due + "\t"
		case extra != "":
			row += "-\t"
		}
		locked := "-"
		if it.Locked != nil {
			locked = it.Locked.Session
			if it.Locked.Host != "" {
				locked += " (" + it.Locked.Host + ")"
			}
		}
		fmt.Fprintln(tw, row+locked+"\t"+peekText(it))
	}
	_ = tw.Flush()
}
