package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/spf13/cobra"

	"github.com/gocurator/curator/cmd/internal/console"
	"github.com/gocurator/curator/cmd/internal/inspect"
)

// Defaults of gocurator ui.
const (
	defaultListen = "127.0.0.1:8080"
	envUIToken    = "GOCURATOR_UI_TOKEN"
	// uiShutdown bounds how long the server waits for requests in flight
	// when it stops.
	uiShutdown = 5 * time.Second
)

// uiOptions are gocurator ui's flags.
type uiOptions struct {
	listen       string
	token        string
	allowActions bool
	rows         int
}

func (a *app) uiCommand() *cobra.Command {
	o := uiOptions{token: os.Getenv(envUIToken)}
	cmd := &cobra.Command{
		Use:   "ui [PATH]",
		Short: "Serve a live web console of the recipes under PATH",
		Long: `Serves a web console of every recipe under PATH (default: the root of
--zk, its chroot if it has one): an overview of the locks, semaphores,
elections, groups, services, counters, barriers and queues found, with
their holders and waiters, members or value, the oldest holder's age and
warnings (a holder whose session is connected to no server, a node left
behind), and a page per recipe with its participants in order. Pages
update live from one recursive watch on ZooKeeper, whatever the number of
browsers. GET /api/recipes and /api/recipes/PATH give the same as JSON.

It prints its URL on standard output and serves until interrupted
(Ctrl-C or SIGTERM, exit 0). Read-only, on 127.0.0.1:8080 by default.
The URL carries an access token (--token, env ` + envUIToken + `, or a
random one): without it, a loopback console shows everything but payloads
(group members' data, service instances' JSON); a console listening on any
other address refuses every request without it. --allow-actions lets the
token's holders revoke and break participants' nodes, each after a
confirmation, each logged on standard error with the remote address.`,
		Example: `  gocurator --zk zk1:2181 ui
  gocurator --zk zk1:2181/app ui /locks --listen 127.0.0.1:9000
  gocurator --zk zk1:2181 ui --listen 0.0.0.0:8080 --allow-actions`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			path := "/"
			if len(args) == 1 {
				path = args[0]
			}
			if o.rows < 1 {
				return usageError{fmt.Errorf("--rows %d: must be at least 1", o.rows)}
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return a.ui(ctx, path, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.listen, "listen", defaultListen, "host:port to serve on; any address but loopback needs the token on every request")
	f.StringVar(&o.token, "token", o.token, "access token (env "+envUIToken+"; default: a random one)")
	f.BoolVar(&o.allowActions, "allow-actions", false, "let token holders revoke and break participants' nodes")
	f.IntVar(&o.rows, "rows", 500, "rows per list on a page (the JSON API is not bounded)")
	return cmd
}

func (a *app) ui(ctx context.Context, path string, o uiOptions) error {
	if err := checkPath(path); err != nil {
		return err
	}
	loopback, err := console.IsLoopback(o.listen)
	if err != nil {
		return usageError{fmt.Errorf("--listen: %v", err)}
	}
	if o.token == "" {
		if o.token, err = console.NewToken(); err != nil {
			return err
		}
	}
	c, err := a.connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	// The cache would wait for a missing root to be made: a typo would
	// serve an empty console. Refuse it, as every command does.
	rctx, cancel := context.WithTimeout(ctx, a.timeout)
	st, err := c.Exists(rctx, path)
	cancel()
	if err == nil && st == nil {
		err = zk.ErrNoNode
	}
	if err != nil {
		return a.describe(path, err)
	}
	con, err := console.New(c, console.Options{
		Root:         path,
		Servers:      inspect.Servers(a.zk),
		Token:        o.token,
		RequireToken: !loopback,
		AllowActions: o.allowActions,
		ActionLog:    a.stderr,
		WriteJSON:    func(w io.Writer, v any) error { return writeJSON(w, v, false) },
		Rows:         o.rows,
	})
	if err != nil {
		return usageError{err}
	}
	sctx, cancel := context.WithTimeout(ctx, a.timeout)
	err = con.Start(sctx)
	cancel()
	if err != nil {
		if ctx.Err() != nil {
			return nil // interrupted while loading
		}
		return a.describe(path, err)
	}
	defer con.Close()
	ln, err := net.Listen("tcp", o.listen)
	if err != nil {
		return fmt.Errorf("cannot listen on %s: %v", o.listen, err)
	}
	srv := &http.Server{Handler: con.Handler(), ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	fmt.Fprintln(a.stdout, uiURL(ln.Addr(), o.listen, o.token))
	mode := "read-only"
	if o.allowActions {
		mode = "actions allowed (revoke, break) for token holders"
	}
	fmt.Fprintf(a.stderr, "gocurator: console of %s on %s, %s; Ctrl-C to stop\n", path, ln.Addr(), mode)
	select {
	case err = <-served:
		_ = con.Close()
		return fmt.Errorf("console server on %s: %v", o.listen, err)
	case <-ctx.Done():
	}
	// The event streams end first: Shutdown waits for every handler.
	_ = con.Close()
	shctx, cancel := context.WithTimeout(context.Background(), uiShutdown)
	defer cancel()
	_ = srv.Shutdown(shctx)
	return nil
}

// uiURL is the console's URL, with its token: the host as given, or this
// machine's name when listening on every interface.
func uiURL(addr net.Addr, listen, token string) string {
	host, _, _ := net.SplitHostPort(listen)
	_, port, _ := net.SplitHostPort(addr.String())
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		if h, err := os.Hostname(); err == nil && h != "" {
			host = h
		} else {
			host = "localhost"
		}
	}
	u := url.URL{Scheme: "http", Host: net.JoinHostPort(host, port), Path: "/", RawQuery: "token=" + url.QueryEscape(token)}
	return u.String()
}
