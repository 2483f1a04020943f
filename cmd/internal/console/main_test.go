package console

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/gocurator/curator/cmd/internal/inspect"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testkit"
)

// addr is the package's ZooKeeper server (testkit.Main).
var addr string

func TestMain(m *testing.M) { testkit.Main(m, &addr) }

// served is a console of one test's tree, behind its access checks, on
// a loopback httptest server.
type served struct {
	con   *Console
	srv   *httptest.Server
	token string
	log   *lockedBuffer
}

// serve starts a console of root through c, with o's other options.
func serve(t *testing.T, c *framework.Client, zkAddr string, o Options) *served {
	t.Helper()
	if o.Token == "" {
		tok, err := NewToken()
		if err != nil {
			t.Fatal(err)
		}
		o.Token = tok
	}
	o.Servers = inspect.Servers(zkAddr)
	log := &lockedBuffer{}
	o.ActionLog = log
	con, err := New(c, o)
	if err != nil {
		t.Fatal(err)
	}
	if err := con.Start(testkit.Ctx(t)); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(con.Handler())
	// The streams end first: the test server's Close waits for them.
	t.Cleanup(srv.Close)
	t.Cleanup(func() { _ = con.Close() })
	return &served{con: con, srv: srv, token: o.Token, log: log}
}

// get fetches path (with the token if withToken) and decodes the JSON
// answer into v, returning the status.
func (s *served) get(t *testing.T, path string, withToken bool, v any) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, s.srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if withToken {
		req.Header.Set("Authorization", "Bearer "+s.token)
	}
	resp, err := s.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if v != nil {
		if err := json.Unmarshal(body, v); err != nil {
			t.Fatalf("GET %s: %d, not JSON: %v\n%s", path, resp.StatusCode, err, body)
		}
	}
	return resp.StatusCode
}

// post sends a form to path with the token if withToken.
func (s *served) post(t *testing.T, path string, form url.Values, withToken bool, v any) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, s.srv.URL+path, strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if withToken {
		req.Header.Set("Authorization", "Bearer "+s.token)
	}
	resp, err := s.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if v != nil {
		if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
			t.Fatalf("POST %s: %d, not JSON: %v", path, resp.StatusCode, err)
		}
	}
	return resp.StatusCode
}

// browser starts a headless Chromium for the test (closed at cleanup).
// Without one the test fails with the command that installs it.
func browser(t *testing.T) context.Context {
	t.Helper()
	path := chromium(t)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.NoSandbox, // tests run as root in containers
		chromedp.Flag("disable-gpu", true),
		chromedp.WindowSize(1200, 900),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	start, stop := context.WithTimeout(ctx, testkit.Deadline)
	defer stop()
	if err := chromedp.Do(ctx); err != nil || start.Err() != nil {
		t.Fatalf("starting %s: %v", path, err)
	}
	return ctx
}

// chromium finds the browser: $CHROMIUM, or one on PATH.
func chromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("no Chromium to drive: run `bash scripts/ensure-chromium.sh` (make deps does), or set CHROMIUM")
	return ""
}

// page is one browser tab on a console.
type page struct {
	t   *testing.T
	ctx context.Context
	s   *served
}

func (s *served) open(t *testing.T, ctx context.Context, path string, withToken bool) *page {
	t.Helper()
	u := s.srv.URL + path
	if withToken {
		u += "?token=" + s.token
	}
	p := &page{t: t, ctx: ctx, s: s}
	p.navigate(u)
	return p
}

// navigate loads u in the tab and marks the page: the marker is lost on
// a reload, and every later check also checks it, so an update seen
// proves the page updated itself.
func (p *page) navigate(u string) {
	p.t.Helper()
	p.do(chromedp.Navigate(u))
	p.do(chromedp.Evaluate[chromedp.Void](`window.__noReload = true`))
}

func (p *page) do(a chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, testkit.Deadline)
	defer cancel()
	if err := chromedp.Do(ctx, a); err != nil {
		p.t.Fatalf("browser: %v", err)
	}
}

// eval returns a JavaScript expression's value.
func (p *page) eval(expr string) string {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, testkit.Deadline)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[string](expr))
	if err != nil {
		p.t.Fatalf("evaluating %s: %v", expr, err)
	}
	return v
}

// waitFor waits until the JavaScript expression is true, on the page as
// loaded (no reload since open), and fails with what the page shows if it
// is not within the deadline.
func (p *page) waitFor(what, expr string) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, 20*time.Second)
	defer cancel()
	_, err := chromedp.Run(ctx, chromedp.Poll[bool](`window.__noReload === true && (`+expr+`)`,
		chromedp.WithPollingTimeout(20*time.Second), chromedp.WithPollingInterval(50*time.Millisecond)))
	if err != nil {
		p.screenshot("failed-" + strings.ReplaceAll(what, " ", "-"))
		p.t.Fatalf("page never showed %s (%v); it shows:\n%s", what, err, p.eval(`document.getElementById("view") ? document.getElementById("view").innerText : document.body.innerText`))
	}
}

// text is the text of the first element matching a CSS selector, "" for
// none.
func (p *page) text(sel string) string {
	p.t.Helper()
	return p.eval(`(function(){var e=document.querySelector(` + jsString(sel) + `);return e?e.textContent.trim():""})()`)
}

// screenshot writes the page as a PNG test artefact: to
// $GOCURATOR_ARTIFACTS if set, else to the test's temporary directory.
func (p *page) screenshot(name string) string {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, testkit.Deadline)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)) // 100: PNG; below it, JPEG
	if err != nil {
		p.t.Errorf("screenshot %s: %v", name, err)
		return ""
	}
	dir := os.Getenv("GOCURATOR_ARTIFACTS")
	if dir == "" {
		dir = p.t.TempDir()
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		p.t.Fatal(err)
	}
	file := filepath.Join(dir, strings.ReplaceAll(p.t.Name(), "/", "_")+"-"+name+".png")
	if err := os.WriteFile(file, png, 0o644); err != nil {
		p.t.Fatal(err)
	}
	p.t.Logf("screenshot: %s", file)
	return file
}

func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// lockedBuffer is an io.Writer safe for concurrent use.
type lockedBuffer struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
