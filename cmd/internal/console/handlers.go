package console

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/cmd/internal/inspect"
	"github.com/gocurator/curator/connstate"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/mutex"
)

// Timing of the event streams.
const (
	// coalesce is how long a stream waits after a change for the next
	// ones before it renders: a burst of changes is one view.
	coalesce = 100 * time.Millisecond
	// keepAlive is the interval of comments on an idle stream, so that
	// proxies keep it open and a dead browser is noticed.
	keepAlive = 15 * time.Second
	// actionTimeout bounds an action's writes.
	actionTimeout = 10 * time.Second
)

func (s *Console) routes() {
	mux := http.NewServeMux()
	mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(staticFS())))
	mux.HandleFunc("GET /{$}", s.overviewPage)
	mux.HandleFunc("GET /r/{path...}", s.recipePage)
	mux.HandleFunc("GET /events", s.events)
	mux.HandleFunc("GET /api/recipes", s.apiRecipes)
	mux.HandleFunc("GET /api/recipes/{path...}", s.apiRecipe)
	mux.HandleFunc("GET /api/orphans", s.apiOrphans)
	mux.HandleFunc("GET /api/status", s.apiStatus)
	mux.HandleFunc("POST /api/actions/{action}", s.apiAction)
	mux.HandleFunc("/api/", func(w http.ResponseWriter, r *http.Request) {
		s.apiError(w, http.StatusNotFound, fmt.Sprintf("no API at %s %s (see GET /api/recipes)", r.Method, r.URL.Path))
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.pageError(w, r, http.StatusNotFound, fmt.Sprintf("no page at %s: recipe pages are /r/PATH", r.URL.Path))
	})
	s.mux = mux
}

// pathError is a path the console cannot show, with its HTTP status.
type pathError struct {
	status int
	msg    string
}

func (e *pathError) Error() string { return e.msg }

// resolve checks that p is a recipe under the root the console shows.
func (s *Console) resolve(p string) error {
	if err := framework.ValidatePath(p); err != nil {
		return &pathError{http.StatusBadRequest, fmt.Sprintf("%q is not a valid ZooKeeper path (absolute, no trailing slash)", p)}
	}
	if !within(s.o.Root, p) {
		return &pathError{http.StatusNotFound, fmt.Sprintf("%s is outside %s, the tree this console shows", p, s.o.Root)}
	}
	sn := s.model.snapshot()
	if _, ok := sn.index[p]; ok {
		return nil
	}
	if _, ok := s.cache.Get(p); !ok {
		return &pathError{http.StatusNotFound, fmt.Sprintf("%s: no such node", p)}
	}
	return &pathError{http.StatusNotFound, fmt.Sprintf("%s is no recipe in use (no lock, election, group, service, counter, barrier or queue there): see the overview for those under %s", p, s.o.Root)}
}

// pathParam is the ZooKeeper path named by the rest of the URL.
func pathParam(r *http.Request) string { return "/" + r.PathValue("path") }

// pageData is what the page templates render.
type pageData struct {
	Title      string
	Root       string
	View       string // overview, recipe
	Path       string
	Query      string
	Events     string // the event stream's URL
	Actions    bool   // actions may be asked from this page
	Hidden     bool   // payloads are hidden: no token
	Status     status
	Overview   *overview
	Detail     *Detail
	Orphans    []inspect.Orphan
	Rows       int // the bound of every list
	RenderedAt time.Time
}

// status is the connection to ZooKeeper as the page shows it.
type status struct {
	State   string    `json:"state"`
	Since   time.Time `json:"since"`
	Healthy bool      `json:"healthy"`
	Loaded  bool      `json:"loaded"`
	Nodes   int       `json:"nodes"`
	Version uint64    `json:"version"`
	// Sessions is "complete" or "unknown" (Problems says why).
	Sessions string   `json:"sessions"`
	Problems []string `json:"problems,omitempty"`
	Root     string   `json:"root"`
	Actions  bool     `json:"actions"`
}

// overview is the overview's rows.
type overview struct {
	Rows  []Recipe
	Total int // recipes matching the filter
	All   int // recipes in the tree
	Now   time.Time
}

func (s *Console) status(sn *snapshot) status {
	return status{State: sn.state.String(), Since: sn.since, Healthy: healthy(sn.state), Loaded: sn.loaded,
		Nodes: sn.nodes, Version: sn.version, Sessions: sn.sessions, Problems: sn.problems, Root: s.o.Root, Actions: s.o.AllowActions}
}

// overviewOf is the overview filtered by q (a substring of path or
// kind), bounded.
func (s *Console) overviewOf(sn *snapshot, q string) *overview {
	now := time.Now()
	ov := &overview{All: len(sn.recipes), Now: now}
	for _, r := range sn.recipes {
		if q != "" && !strings.Contains(r.Path, q) && !strings.Contains(r.Kind, q) {
			continue
		}
		ov.Total++
		if len(ov.Rows) < s.o.Rows {
			ov.Rows = append(ov.Rows, aged(r, now))
		}
	}
	return ov
}

func (s *Console) data(r *http.Request, view, path string) (pageData, error) {
	sn := s.model.snapshot()
	holder := s.tokenHolder(r)
	d := pageData{Root: s.o.Root, View: view, Path: path, Query: r.URL.Query().Get("q"), Status: s.status(sn),
		Actions: s.o.AllowActions && holder, Hidden: !holder, Rows: s.o.Rows, RenderedAt: time.Now()}
	switch view {
	case "overview":
		d.Title = "Recipes under " + s.o.Root
		d.Overview = s.overviewOf(sn, d.Query)
		d.Orphans = sn.orphans()
		if len(d.Orphans) > s.o.Rows {
			d.Orphans = d.Orphans[:s.o.Rows]
		}
		for i := range d.Orphans {
			d.Orphans[i].AgeSeconds = ageSeconds(d.Orphans[i].Created, d.RenderedAt)
		}
		d.Events = "/events?view=overview&q=" + urlQuery(d.Query)
	case "recipe":
		d.Title = path
		d.Events = "/events?view=recipe&path=" + urlQuery(path)
		det, ok := s.model.detail(path, s.o.Rows, holder)
		if !ok {
			return d, s.resolve(path)
		}
		d.Detail = &det
	}
	return d, nil
}

func (s *Console) overviewPage(w http.ResponseWriter, r *http.Request) {
	d, _ := s.data(r, "overview", "")
	s.render(w, http.StatusOK, "page", d)
}

func (s *Console) recipePage(w http.ResponseWriter, r *http.Request) {
	p := pathParam(r)
	if err := s.resolve(p); err != nil {
		s.pageError(w, r, statusOf(err), err.Error())
		return
	}
	d, err := s.data(r, "recipe", p)
	if err != nil {
		s.pageError(w, r, statusOf(err), err.Error())
		return
	}
	s.render(w, http.StatusOK, "page", d)
}

func statusOf(err error) int {
	var pe *pathError
	if errors.As(err, &pe) {
		return pe.status
	}
	return http.StatusInternalServerError
}

// render executes a template into a buffer first: a failure is a 500,
// not half a page.
func (s *Console) render(w http.ResponseWriter, code int, name string, d any) {
	var b bytes.Buffer
	if err := s.pages.ExecuteTemplate(&b, name, d); err != nil {
		http.Error(w, "console: rendering "+name+": "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_, _ = w.Write(b.Bytes())
}

func (s *Console) pageError(w http.ResponseWriter, _ *http.Request, code int, msg string) {
	s.render(w, code, "error", struct {
		Title, Root, Message string
		Code                 int
	}{http.StatusText(code), s.o.Root, msg, code})
}

// events streams the view named by the query (overview, with its filter
// q, or recipe with path) as server-sent events: the rendered fragment
// at once, then after every change, until the browser goes or the
// console closes. It reads the model only.
func (s *Console) events(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	view, path := q.Get("view"), q.Get("path")
	switch view {
	case "overview":
	case "recipe":
		if err := framework.ValidatePath(path); err != nil || !within(s.o.Root, path) {
			http.Error(w, fmt.Sprintf("console: %q is not a path under %s", path, s.o.Root), http.StatusNotFound)
			return
		}
	default:
		http.Error(w, "console: view must be overview or recipe", http.StatusBadRequest)
		return
	}
	fl, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "console: streaming unsupported", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	fmt.Fprint(w, "retry: 1000\n\n")
	fl.Flush()
	keep := time.NewTicker(keepAlive)
	defer keep.Stop()
	var sent uint64
	first := true
	for {
		v, changed := s.model.watch()
		if first || v != sent {
			first, sent = false, v
			if err := s.sendView(w, r, view, path, v); err != nil {
				return
			}
			fl.Flush()
		}
		select {
		case <-changed:
			// Let a burst of changes settle into one view.
			t := time.NewTimer(coalesce)
			select {
			case <-t.C:
			case <-r.Context().Done():
				t.Stop()
				return
			case <-s.ctx.Done():
				t.Stop()
				return
			}
		case <-keep.C:
			if _, err := fmt.Fprint(w, ": keep-alive\n\n"); err != nil {
				return
			}
			fl.Flush()
		case <-r.Context().Done():
			return
		case <-s.ctx.Done():
			return
		}
	}
}

// sendView writes one "view" event: the fragment, a data line per line.
func (s *Console) sendView(w http.ResponseWriter, r *http.Request, view, path string, version uint64) error {
	d, err := s.data(r, view, path)
	var b bytes.Buffer
	switch {
	case err != nil:
		err = s.pages.ExecuteTemplate(&b, "gone", struct {
			Path, Message string
			Status        status
		}{path, err.Error(), d.Status})
	default:
		err = s.pages.ExecuteTemplate(&b, view, d)
	}
	if err != nil {
		return err
	}
	var out bytes.Buffer
	fmt.Fprintf(&out, "event: view\nid: %d\n", version)
	for _, line := range strings.Split(b.String(), "\n") {
		out.WriteString("data: ")
		out.WriteString(strings.TrimRight(line, "\r"))
		out.WriteString("\n")
	}
	out.WriteString("\n")
	_, err = w.Write(out.Bytes())
	return err
}

// API

func (s *Console) writeJSON(w http.ResponseWriter, code int, v any) {
	var b bytes.Buffer
	if err := s.o.WriteJSON(&b, v); err != nil {
		http.Error(w, "console: encoding: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_, _ = w.Write(b.Bytes())
}

// apiErrorDoc is every API error's body.
type apiErrorDoc struct {
	Error string `json:"error"`
}

func (s *Console) apiError(w http.ResponseWriter, code int, msg string) {
	s.writeJSON(w, code, apiErrorDoc{Error: msg})
}

// apiRecipes is GET /api/recipes: one object per recipe path, in path
// order, every one (the overview page is bounded, the API is not).
func (s *Console) apiRecipes(w http.ResponseWriter, _ *http.Request) {
	sn := s.model.snapshot()
	now := time.Now()
	out := make([]Recipe, len(sn.recipes))
	for i, r := range sn.recipes {
		out[i] = aged(r, now)
	}
	s.writeJSON(w, http.StatusOK, out)
}

// apiRecipe is GET /api/recipes/PATH: the recipe's page as JSON.
func (s *Console) apiRecipe(w http.ResponseWriter, r *http.Request) {
	p := pathParam(r)
	if err := s.resolve(p); err != nil {
		s.apiError(w, statusOf(err), err.Error())
		return
	}
	d, ok := s.model.detail(p, 0, s.tokenHolder(r))
	if !ok {
		err := s.resolve(p)
		if err == nil {
			err = &pathError{http.StatusNotFound, p + ": gone"}
		}
		s.apiError(w, statusOf(err), err.Error())
		return
	}
	s.writeJSON(w, http.StatusOK, d)
}

// orphansDoc is GET /api/orphans, shaped as gocurator orphans --json.
type orphansDoc struct {
	Orphans  []inspect.Orphan `json:"orphans"`
	Sessions string           `json:"sessions"`
}

func (s *Console) apiOrphans(w http.ResponseWriter, _ *http.Request) {
	sn := s.model.snapshot()
	now := time.Now()
	out := sn.orphans()
	for i := range out {
		out[i].AgeSeconds = ageSeconds(out[i].Created, now)
	}
	s.writeJSON(w, http.StatusOK, orphansDoc{Orphans: out, Sessions: sn.sessions})
}

func (s *Console) apiStatus(w http.ResponseWriter, _ *http.Request) {
	s.writeJSON(w, http.StatusOK, s.status(s.model.snapshot()))
}

// actionDoc is the answer to an action.
type actionDoc struct {
	Action string `json:"action"`
	Node   string `json:"node"`
	Done   bool   `json:"done"`
	// Session and Token identify the node acted on.
	Session string `json:"session"`
	Token   int64  `json:"token"`
}

// apiAction is POST /api/actions/{revoke,break}, form fields node and
// confirm (the node again: the page's confirmation). Only token holders,
// only with AllowActions, only on a participant's node under the root.
func (s *Console) apiAction(w http.ResponseWriter, r *http.Request) {
	action := r.PathValue("action")
	if action != "revoke" && action != "break" {
		s.apiError(w, http.StatusNotFound, fmt.Sprintf("no action %q: revoke or break", action))
		return
	}
	if !s.o.AllowActions {
		s.apiError(w, http.StatusForbidden, "actions are disabled: start gocurator ui with --allow-actions")
		return
	}
	if !s.tokenHolder(r) {
		s.apiError(w, http.StatusForbidden, "actions need the console's access token (open the URL gocurator ui printed)")
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		s.apiError(w, http.StatusBadRequest, "bad form: "+err.Error())
		return
	}
	node, confirm := r.PostForm.Get("node"), r.PostForm.Get("confirm")
	if confirm != node || node == "" {
		s.apiError(w, http.StatusBadRequest, "not confirmed: confirm must repeat node")
		return
	}
	if err := framework.ValidatePath(node); err != nil || !within(s.o.Root, node) {
		s.apiError(w, http.StatusNotFound, fmt.Sprintf("%q is not a node under %s", node, s.o.Root))
		return
	}
	n, ok := s.cache.Get(node)
	_, name := framework.SplitPath(node)
	if !ok || !inspect.IsParticipantName(name) || n.Stat.EphemeralOwner == 0 {
		s.apiError(w, http.StatusNotFound, fmt.Sprintf("%s is not a lock, lease or latch node (see the recipe's page for them)", node))
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), actionTimeout)
	defer cancel()
	doc := actionDoc{Action: action, Node: node, Session: inspect.SessionHex(n.Stat.EphemeralOwner), Token: n.Stat.Czxid}
	var err error
	switch action {
	case "revoke":
		err = mutex.Revoke(ctx, s.c, node)
	case "break":
		// As gocurator break: a node's name carries its sequence, so the
		// node deleted is the one shown; a revocation request in its data
		// is no reason to refuse.
		err = s.c.Delete(ctx, node)
	}
	result := "done"
	if err != nil {
		result = "failed: " + err.Error()
	}
	fmt.Fprintf(s.o.ActionLog, "%s console action %s %s (session %s, token %d) asked by %s: %s\n",
		time.Now().UTC().Format(time.RFC3339), action, node, doc.Session, doc.Token, r.RemoteAddr, result)
	switch {
	case errors.Is(err, zk.ErrNoNode):
		s.apiError(w, http.StatusNotFound, node+": no such node (released meanwhile?)")
	case err != nil:
		s.apiError(w, http.StatusBadGateway, node+": "+err.Error())
	default:
		doc.Done = true
		s.writeJSON(w, http.StatusOK, doc)
	}
}

// healthy reports whether the client is connected to a server.
func healthy(s connstate.State) bool {
	return s == connstate.Connected || s == connstate.Reconnected || s == connstate.ReadOnly
}
