package console

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"net/http"
	"sync"

	"github.com/gocurator/curator/cmd/internal/inspect"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/cache"
)

// Defaults of Options.
const (
	// defaultRows bounds the overview's rows and each list of a recipe's
	// page: a tree of 100k nodes still renders at once.
	defaultRows = 500
)

// Options configure a Console. The zero value is a read-only console of
// "/" whose payloads nobody sees (no token).
type Options struct {
	// Root is the path whose tree the console shows ("/" when empty).
	Root string
	// Servers are the host:port of the ensemble's servers, asked "cons"
	// for whose sessions are connected (inspect.Servers of the connect
	// string).
	Servers []string
	// Token is the access token: requests that carry it (query "token",
	// the cookie the console sets, or "Authorization: Bearer") see
	// payloads and may act. Empty: nobody does.
	Token string
	// RequireToken refuses every request without the token (401): for
	// any listen address but loopback.
	RequireToken bool
	// AllowActions enables revoke and break for token holders.
	AllowActions bool
	// ActionLog gets one line per action asked (nil: discarded).
	ActionLog io.Writer
	// WriteJSON encodes the API's documents; the gocurator command passes
	// the encoder of its --json output. Default: indented encoding/json.
	WriteJSON func(w io.Writer, v any) error
	// Rows bounds the overview's rows and each list on a recipe's page
	// (default 500).
	Rows int
}

// ErrInvalidOption is returned by New for options it cannot use.
var ErrInvalidOption = errors.New("console: invalid option")

// Console serves the web console of one tree: an http.Handler. New
// makes it, Start loads the tree, Close stops it.
type Console struct {
	c     *framework.Client
	o     Options
	cache *cache.Cache
	model *model
	pages *template.Template
	mux   *http.ServeMux

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	stop   []func()
}

// New returns a console of o.Root through c. It does no I/O.
func New(c *framework.Client, o Options) (*Console, error) {
	if c == nil {
		return nil, fmt.Errorf("%w: nil client", ErrInvalidOption)
	}
	if o.Root == "" {
		o.Root = "/"
	}
	if err := framework.ValidatePath(o.Root); err != nil {
		return nil, fmt.Errorf("%w: root %q: %v", ErrInvalidOption, o.Root, err)
	}
	if o.RequireToken && o.Token == "" {
		return nil, fmt.Errorf("%w: RequireToken without a Token", ErrInvalidOption)
	}
	if o.Rows <= 0 {
		o.Rows = defaultRows
	}
	if o.WriteJSON == nil {
		o.WriteJSON = func(w io.Writer, v any) error {
			enc := json.NewEncoder(w)
			enc.SetIndent("", "  ")
			return enc.Encode(v)
		}
	}
	if o.ActionLog == nil {
		o.ActionLog = io.Discard
	}
	pages, err := parseTemplates()
	if err != nil {
		return nil, err
	}
	cc := cache.New(c, o.Root)
	s := &Console{c: c, o: o, cache: cc, model: newModel(o.Root, cc, o.Servers), pages: pages}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.routes()
	return s, nil
}

// Start loads the tree (the cache's initial load) and starts following
// it; it returns once the first view is published. On failure (ctx's
// error, the root missing or unreadable) nothing is left running.
func (s *Console) Start(ctx context.Context) error {
	s.stop = append(s.stop, s.cache.Listen(s.model.onEvent), s.c.Listen(s.model.onState))
	_, first := s.model.watch()
	s.wg.Add(2)
	go func() { defer s.wg.Done(); s.model.run(s.ctx) }()
	go func() { defer s.wg.Done(); s.model.runSessions(s.ctx) }()
	if err := s.cache.Start(ctx); err != nil {
		s.Close()
		return fmt.Errorf("console %s: %w", s.o.Root, err)
	}
	// The load's Initialized event asks for a full classification; its
	// publish (or the first session query's) is the first view.
	for !s.model.isLoaded() {
		select {
		case <-first:
			_, first = s.model.watch()
		case <-ctx.Done():
			s.Close()
			return fmt.Errorf("console %s: %w", s.o.Root, ctx.Err())
		}
	}
	return nil
}

func (m *model) isLoaded() bool {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.loaded
}

// Close stops following the tree and ends every event stream. It is
// idempotent.
func (s *Console) Close() error {
	s.cancel()
	for _, f := range s.stop {
		f()
	}
	s.stop = nil
	_ = s.cache.Close()
	s.wg.Wait()
	return nil
}

// ServeHTTP serves the console's pages, its event streams and its API.
func (s *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// NewToken returns a random access token (128 bits, hex).
func NewToken() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// orphans returns the empty lock directories left behind, with their
// ages, for the overview and GET /api/orphans.
func (sn *snapshot) orphans() []inspect.Orphan {
	return append([]inspect.Orphan{}, sn.empties...)
}
