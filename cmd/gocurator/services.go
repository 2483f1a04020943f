package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/spf13/cobra"

	"github.com/gocurator/curator/cmd/internal/inspect"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/discovery"
)

// defaultServicesBase is where Spring Cloud Zookeeper, Dubbo's service
// discovery and Curator's examples register: the --base default.
const defaultServicesBase = "/services"

// servicesDoc is services ls's --json document without NAME.
type servicesDoc struct {
	Base     string           `json:"base"`
	Services []serviceSummary `json:"services"`
}

// serviceSummary is one service: its name and how many instance nodes it
// has.
type serviceSummary struct {
	Name      string `json:"name"`
	Instances int    `json:"instances"`
}

// serviceDoc is services ls NAME's --json document.
type serviceDoc struct {
	Base      string        `json:"base"`
	Service   string        `json:"service"`
	Instances []instanceDoc `json:"instances"`
	// Malformed lists the instance nodes whose data is not Curator's
	// ServiceInstance JSON (Curator's readers skip them, as ours do).
	Malformed []malformedDoc `json:"malformed"`
	// Sessions is as in locks ls: "complete" when every server answered
	// cons, else "unknown".
	Sessions string `json:"sessions"`
}

// instanceDoc is one instance with what its node says about it. It is
// also services show's --json document (with Sessions).
type instanceDoc struct {
	// Node is the instance's node (for DYNAMIC_SEQUENTIAL, <id><sequence>).
	Node string `json:"node"`
	// Session is the owner session of an ephemeral instance (DYNAMIC,
	// DYNAMIC_SEQUENTIAL), "" for a persistent one (STATIC, PERMANENT).
	Session string `json:"session,omitempty"`
	// Connected is yes, no or unknown, as in locks ls; "" for a persistent
	// instance.
	Connected string `json:"connected,omitempty"`
	// Created is when the node was made (it differs from the instance's
	// registrationTimeUTC once an instance is registered again).
	Created time.Time `json:"created"`
	// URI is the instance's uriSpec filled in, "" without one.
	URI string `json:"uri,omitempty"`
	// Instance is the node's data: Curator's ServiceInstance JSON as the
	// registrant wrote it.
	Instance json.RawMessage `json:"instance"`
	// Sessions is services show's: as in serviceDoc.
	Sessions string `json:"sessions,omitempty"`

	inst discovery.Instance
	st   *zk.Stat
}

// malformedDoc is an instance node that could not be read.
type malformedDoc struct {
	Node  string `json:"node"`
	Error string `json:"error"`
}

func (a *app) servicesCommand() *cobra.Command {
	var base string
	cmd := &cobra.Command{
		Use:   "services",
		Short: "Inspect service discovery (Curator's curator-x-discovery, Spring Cloud Zookeeper, Dubbo)",
		Long: `Shows the services registered with Curator's service discovery layout,
<base>/<service>/<instance id>, each node holding Curator's ServiceInstance
JSON: what Spring Cloud Zookeeper, Apache Dubbo, Curator's ServiceDiscovery
and gocurator's recipes/discovery write.`,
	}
	cmd.PersistentFlags().StringVar(&base, "base", defaultServicesBase, "the services' base path (Curator's ServiceDiscoveryBuilder.basePath)")
	ls := &cobra.Command{
		Use:   "ls [NAME]",
		Short: "List the services, or the instances of service NAME",
		Long: `Without NAME, lists the services under --base with their number of
instance nodes. With NAME, lists the instances of that service: id,
address, ports, service type, whether enabled, when registered, the owner
session of an ephemeral instance and whether it is still connected (from
the servers' "cons", as locks ls), and the URI its uriSpec makes. Nodes
whose data is not an instance are listed as malformed.`,
		Example: `  gocurator --zk zk1:2181 services ls
  gocurator --zk zk1:2181 services ls orders
  gocurator --zk zk1:2181 --json services ls orders | jq -r '.instances[].uri'`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return a.servicesLs(cmd.Context(), base)
			}
			return a.serviceLs(cmd.Context(), base, args[0])
		},
		ValidArgsFunction: a.completeServices(&base),
	}
	show := &cobra.Command{
		Use:   "show NAME ID",
		Short: "Show every field of instance ID of service NAME",
		Long: `Shows the instance ID of service NAME: every field of Curator's
ServiceInstance, its payload (with Jackson's "@class" type tag), its node
and owner session. A DYNAMIC_SEQUENTIAL instance, whose node is named
<ID><sequence>, is found by its ID.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.serviceShow(cmd.Context(), base, args[0], args[1])
		},
		ValidArgsFunction: a.completeServices(&base),
	}
	cmd.AddCommand(ls, show)
	return cmd
}

// checkSegment refuses a service name or instance id that is not one
// path segment.
func checkSegment(what, s string) error {
	if s == "" || s == "." || s == ".." || strings.ContainsAny(s, "/\x00") {
		return usageError{fmt.Errorf("%s %q: not a node name", what, s)}
	}
	return nil
}

// openServices checks --base and connects.
func (a *app) openServices(ctx context.Context, base string) (*framework.Client, error) {
	if err := framework.ValidatePath(base); err != nil {
		return nil, usageError{fmt.Errorf("--base %q is not a valid ZooKeeper path (absolute, no trailing slash)", base)}
	}
	return a.connect(ctx)
}

// describeBase says that the base path is missing, naming the flag.
func (a *app) describeBase(base string, err error) error {
	if errors.Is(err, zk.ErrNoNode) {
		return fmt.Errorf("%s: no such node: no service is registered there (see --base)", base)
	}
	return a.describe(base, err)
}

func (a *app) servicesLs(ctx context.Context, base string) error {
	c, err := a.openServices(ctx, base)
	if err != nil {
		return err
	}
	defer c.Close()
	rctx, cancel := context.WithTimeout(ctx, a.timeout)
	defer cancel()
	if err := a.checkServicePath(rctx, c, base, inspect.KindServices); err != nil {
		return err
	}
	names, _, err := c.Children(rctx, base)
	if err != nil {
		return a.describeBase(base, err)
	}
	slices.Sort(names)
	doc := servicesDoc{Base: base, Services: make([]serviceSummary, len(names))}
	err = forEach(len(names), func(i int) error {
		kids, st, err := c.Children(rctx, framework.JoinPath(base, names[i]))
		doc.Services[i] = serviceSummary{Name: names[i], Instances: len(kids)}
		if errors.Is(err, zk.ErrNoNode) || st == nil {
			return nil // deleted meanwhile: none
		}
		return err
	})
	if err != nil {
		return a.describe(base, err)
	}
	if a.json {
		return writeJSON(a.stdout, doc, false)
	}
	if len(names) == 0 {
		fmt.Fprintf(a.stdout, "%s: no service\n", base)
		return nil
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SERVICE\tINSTANCES")
	for _, s := range doc.Services {
		fmt.Fprintf(tw, "%s\t%d\n", s.Name, s.Instances)
	}
	return tw.Flush()
}

// readService reads every instance node of service name; a service
// without a node is an error naming the services there are.
func (a *app) readService(ctx context.Context, c *framework.Client, base, name string) ([]instanceDoc, []malformedDoc, error) {
	svc := framework.JoinPath(base, name)
	if err := a.checkServicePath(ctx, c, svc, inspect.KindService); err != nil {
		return nil, nil, err
	}
	kids, _, err := c.Children(ctx, svc)
	if errors.Is(err, zk.ErrNoNode) {
		names, _, nerr := c.Children(ctx, base)
		if nerr != nil {
			return nil, nil, a.describeBase(base, nerr)
		}
		slices.Sort(names)
		return nil, nil, fmt.Errorf("%s: no such service (services under %s: %s)", svc, base, list(names))
	}
	if err != nil {
		return nil, nil, a.describe(svc, err)
	}
	slices.Sort(kids)
	docs := make([]instanceDoc, len(kids))
	bad := make([]*malformedDoc, len(kids))
	err = forEach(len(kids), func(i int) error {
		p := framework.JoinPath(svc, kids[i])
		data, st, err := c.Get(ctx, p)
		if errors.Is(err, zk.ErrNoNode) {
			return nil // unregistered meanwhile
		}
		if err != nil {
			return err
		}
		inst, derr := discovery.Decode(data)
		if derr != nil {
			bad[i] = &malformedDoc{Node: p, Error: derr.Error()}
			return nil
		}
		docs[i] = instanceDoc{Node: p, Created: time.UnixMilli(st.Ctime).UTC(), URI: inst.URI(nil),
			Instance: json.RawMessage(data), inst: inst, st: st}
		return nil
	})
	if err != nil {
		return nil, nil, a.describe(svc, err)
	}
	out := make([]instanceDoc, 0, len(docs))
	for _, d := range docs {
		if d.st != nil {
			out = append(out, d)
		}
	}
	malformed := []malformedDoc{}
	for _, b := range bad {
		if b != nil {
			malformed = append(malformed, *b)
		}
	}
	return out, malformed, nil
}

// annotate fills each ephemeral instance's session and its state.
func annotate(docs []instanceDoc, s *inspect.Sessions) {
	for i := range docs {
		if owner := docs[i].st.EphemeralOwner; owner != 0 {
			docs[i].Session = inspect.SessionHex(owner)
			docs[i].Connected, _ = s.State(owner)
		}
	}
}

func (a *app) serviceLs(ctx context.Context, base, name string) error {
	if err := checkSegment("service", name); err != nil {
		return err
	}
	c, err := a.openServices(ctx, base)
	if err != nil {
		return err
	}
	defer c.Close()
	rctx, cancel := context.WithTimeout(ctx, a.timeout)
	defer cancel()
	docs, malformed, err := a.readService(rctx, c, base, name)
	if err != nil {
		return err
	}
	s := inspect.QuerySessions(rctx, inspect.Servers(a.zk), a.timeout)
	annotate(docs, s)
	if a.json {
		return writeJSON(a.stdout, serviceDoc{Base: base, Service: name, Instances: docs, Malformed: malformed,
			Sessions: sessionsState(s)}, false)
	}
	writeService(a.stdout, framework.JoinPath(base, name), docs, malformed, time.Now())
	if len(docs) > 0 {
		warnSessions(a.stderr, s)
	}
	return nil
}

func writeService(w io.Writer, svc string, docs []instanceDoc, malformed []malformedDoc, now time.Time) {
	fmt.Fprintf(w, "%s  %s", svc, plural(len(docs), "instance"))
	if len(malformed) > 0 {
		fmt.Fprintf(w, ", %d malformed", len(malformed))
	}
	fmt.Fprintln(w)
	if len(docs) > 0 {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  ID\tADDRESS\tPORT\tSSL\tTYPE\tENABLED\tREGISTERED\tSESSION\tCONNECTED\tURI")
		for _, d := range docs {
			i := d.inst
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", i.ID, dash(i.Address), port(i.Port), port(i.SSLPort),
				dash(string(i.ServiceType)), yesNo(i.IsEnabled()), registered(i, now), dash(d.Session), dash(d.Connected), dash(d.URI))
		}
		_ = tw.Flush()
	}
	for _, m := range malformed {
		fmt.Fprintf(w, "  malformed  %s  %s\n", m.Node, m.Error)
	}
}

func (a *app) serviceShow(ctx context.Context, base, name, id string) error {
	if err := checkSegment("service", name); err != nil {
		return err
	}
	if err := checkSegment("instance id", id); err != nil {
		return err
	}
	c, err := a.openServices(ctx, base)
	if err != nil {
		return err
	}
	defer c.Close()
	rctx, cancel := context.WithTimeout(ctx, a.timeout)
	defer cancel()
	docs, malformed, err := a.readService(rctx, c, base, name)
	if err != nil {
		return err
	}
	var doc *instanceDoc
	for i := range docs {
		if docs[i].inst.ID == id {
			doc = &docs[i]
			break
		}
	}
	if doc == nil {
		for _, m := range malformed {
			if _, n := framework.SplitPath(m.Node); n == id {
				return fmt.Errorf("%s: not a service instance: %s", m.Node, m.Error)
			}
		}
		ids := make([]string, len(docs))
		for i, d := range docs {
			ids[i] = d.inst.ID
		}
		return fmt.Errorf("%s: no instance %q (instances: %s)", framework.JoinPath(base, name), id, list(ids))
	}
	s := inspect.QuerySessions(rctx, inspect.Servers(a.zk), a.timeout)
	annotate(docs, s)
	if a.json {
		doc.Sessions = sessionsState(s)
		return writeJSON(a.stdout, doc, false)
	}
	writeInstance(a.stdout, *doc, time.Now())
	if doc.Session != "" {
		warnSessions(a.stderr, s)
	}
	return nil
}

func writeInstance(w io.Writer, d instanceDoc, now time.Time) {
	i := d.inst
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	row := func(k, v string) { fmt.Fprintf(tw, "%s\t%s\n", k, v) }
	row("service", i.Name)
	row("id", i.ID)
	row("address", dash(i.Address))
	row("port", port(i.Port))
	row("ssl port", port(i.SSLPort))
	row("uri", dash(d.URI))
	if i.URISpec != nil {
		row("uri spec", i.URISpec.String())
	}
	row("type", dash(string(i.ServiceType)))
	enabled := yesNo(i.IsEnabled())
	if i.Enabled == nil {
		enabled += " (no \"enabled\" field: Curator's default serializer)"
	}
	row("enabled", enabled)
	row("registered", registered(i, now))
	node := d.Node
	if d.Session != "" {
		node += fmt.Sprintf("  ephemeral, session %s, connected %s", d.Session, d.Connected)
	} else {
		node += "  persistent"
	}
	row("node", node)
	row("created", fmt.Sprintf("%s (%s ago)", d.Created.Format("2006-01-02T15:04:05.000Z"), inspect.FormatAge(now.Sub(d.Created).Seconds())))
	if c := i.PayloadClass(); c != "" {
		row("payload class", c)
	}
	if len(i.Payload) == 0 || string(i.Payload) == "null" {
		row("payload", "-")
		_ = tw.Flush()
		return
	}
	_ = tw.Flush()
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, i.Payload, "  ", "  "); err != nil {
		pretty.Reset()
		pretty.Write(i.Payload)
	}
	fmt.Fprintf(w, "payload\n  %s\n", pretty.String())
}

// registered is the instance's registrationTimeUTC and its age.
func registered(i discovery.Instance, now time.Time) string {
	if i.RegistrationTimeUTC == 0 {
		return "-"
	}
	t := time.UnixMilli(i.RegistrationTimeUTC).UTC()
	return fmt.Sprintf("%s (%s ago)", t.Format("2006-01-02T15:04:05.000Z"), inspect.FormatAge(max(now.Sub(t).Seconds(), 0)))
}

func port(p *int) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprint(*p)
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// list joins names for a message, "none" for none, the first ten only.
func list(names []string) string {
	switch {
	case len(names) == 0:
		return "none"
	case len(names) > 10:
		return strings.Join(names[:10], ", ") + fmt.Sprintf(", ... (%d in all)", len(names))
	}
	return strings.Join(names, ", ")
}

// forEach runs fn(0..n-1), up to 32 at a time (the client pipelines the
// reads), and returns the first error.
func forEach(n int, fn func(i int) error) error {
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	sem := make(chan struct{}, 32)
	for i := range n {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			if err := fn(i); err != nil {
				mu.Lock()
				if first == nil {
					first = err
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return first
}

// completeServices completes NAME from the services under base and ID
// from the instance nodes of NAME.
func (a *app) completeServices(base *string) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		const none = cobra.ShellCompDirectiveNoFileComp
		if len(args) > 1 || (len(args) == 1 && cmd.Name() == "ls") || framework.ValidatePath(*base) != nil {
			return nil, none
		}
		dir := *base
		if len(args) == 1 {
			if checkSegment("service", args[0]) != nil {
				return nil, none
			}
			dir = framework.JoinPath(dir, args[0])
		}
		a.timeout = min(a.timeout, completeTimeout)
		ctx, cancel := context.WithTimeout(cmd.Context(), a.timeout)
		defer cancel()
		c, err := a.connect(ctx)
		if err != nil {
			return nil, none
		}
		defer c.Close()
		names, _, err := c.Children(ctx, dir)
		if err != nil {
			return nil, none
		}
		var out []string
		for _, n := range names {
			if strings.HasPrefix(n, toComplete) {
				out = append(out, n)
			}
		}
		slices.Sort(out)
		return out, none
	}
}

// checkServicePath refuses (exit 65) a base path or a service path (want
// says which) that holds another recipe: a lock's or a latch's nodes, a
// counter, a queue, a service given as the base. Layouts the classifier
// does not know, and ephemeral nodes of no recipe (malformed instances),
// are listed as they are; a missing path is left to the listing.
func (a *app) checkServicePath(ctx context.Context, c *framework.Client, path, want string) error {
	place, z, err := inspect.Locate(ctx, c, path)
	if err != nil {
		return nil
	}
	k := place.Layout.Kind
	switch {
	case place.Part == "" && (k == "" || k == want || k == inspect.KindGroup):
		return nil
	case place.Part == inspect.PartService && want == inspect.KindService:
		return nil // a service with no instance left
	}
	what := "a service discovery base path"
	if want == inspect.KindService {
		what = "a registered service"
	}
	return wrongKind(path, place, z, what, "")
}
