package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/gocurator/curator/zktest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// deadline bounds every wait of the test.
const deadline = 60 * time.Second

// A real Prometheus scrapes the example while it takes locks, through a
// lost create reply and a partition longer than the session; every query
// of the Grafana dashboard and of the alerting rules must then return
// series, and Prometheus must evaluate every rule without error. A metric
// renamed without the dashboard and the rules following fails here.
func TestDashboardAndAlertQueries(t *testing.T) {
	prom := ensurePrometheus(t)
	dashboard := dashboardQueries(t)

	srv := zktest.StartServer(t)
	proxy := zktest.NewProxy(t, srv.Addr())
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, config{
			ZK: proxy.Addr(), Listen: "127.0.0.1:0", Namespace: "observability-test",
			Workers: 3, Hold: 5 * time.Millisecond, Term: time.Second,
			SessionTimeout: 2 * time.Second,
			Ready:          func(addr string) { ready <- addr },
		})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("example: %v", err)
		}
	})
	var target string
	select {
	case target = <-ready:
	case err := <-done:
		t.Fatalf("example ended before serving: %v", err)
	case <-time.After(deadline):
		t.Fatal("example not serving")
	}

	api := startPrometheus(t, prom, target, rulesFile(t))
	alerts := alertQueries(t, api)

	// A lost reply: a protected create recovered on its retry.
	select {
	case <-proxy.LoseNextCreateReply():
	case <-time.After(deadline):
		t.Fatal("the lost-reply fault never fired")
	}
	waitSeries(t, api, []string{`curator_client_protected_create_recoveries_total`})
	// A partition longer than the session: holds lost, the session
	// expired on the client side, deletes pending in the background.
	proxy.Cut()
	waitSeries(t, api, []string{`curator_client_session_expirations_total`, `curator_lock_losses_total`})
	proxy.Restore()

	waitSeries(t, api, append(dashboard, alerts...))
	waitRulesHealthy(t, api)
}

// ensurePrometheus installs Prometheus with the repository's script if it
// is missing and returns the path of its binary.
func ensurePrometheus(t *testing.T) string {
	t.Helper()
	script := filepath.Join("..", "..", "scripts", "ensure-prometheus.sh")
	if out, err := exec.Command("bash", script).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", script, err, out)
	}
	p, err := exec.LookPath("prometheus")
	if err != nil {
		t.Fatalf("prometheus not on PATH after %s: %v", script, err)
	}
	return p
}

// dashboardQueries returns the expr of every target of every panel of the
// Grafana dashboard.
func dashboardQueries(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "grafana-dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("dashboard: %v", err)
	}
	var out []string
	for _, p := range d.Panels {
		for _, tg := range p.Targets {
			if tg.Expr == "" {
				t.Fatalf("dashboard panel %q: a target without expr", p.Title)
			}
			out = append(out, tg.Expr)
		}
	}
	if len(out) == 0 {
		t.Fatal("dashboard without queries")
	}
	return out
}

// rulesFile returns the alerting rules' file, absolute.
func rulesFile(t *testing.T) string {
	t.Helper()
	path, err := filepath.Abs(filepath.Join("..", "..", "docs", "observability-alerts.yml"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
	return path
}

// alertRule is an alerting rule as Prometheus's API shows it.
type alertRule struct {
	Name        string            `json:"name"`
	Query       string            `json:"query"`
	Health      string            `json:"health"`
	LastError   string            `json:"lastError"`
	Annotations map[string]string `json:"annotations"`
}

// alertRules returns the alerting rules Prometheus loaded.
func alertRules(t *testing.T, api string) []alertRule {
	t.Helper()
	resp, err := http.Get(api + "/api/v1/rules?type=alert")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r struct {
		Data struct {
			Groups []struct {
				Rules []alertRule `json:"rules"`
			} `json:"groups"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		t.Fatal(err)
	}
	var out []alertRule
	for _, g := range r.Data.Groups {
		out = append(out, g.Rules...)
	}
	return out
}

// alertQueries returns the queries of the alerting rules Prometheus loaded:
// each rule's "queries" annotation, one a line, each of which must be part
// of its expression.
func alertQueries(t *testing.T, api string) []string {
	t.Helper()
	rules := alertRules(t, api)
	if len(rules) == 0 {
		t.Fatal("prometheus loaded no alerting rules")
	}
	var out []string
	for _, r := range rules {
		lines := strings.Split(strings.TrimSpace(r.Annotations["queries"]), "\n")
		if lines[0] == "" {
			t.Fatalf("alert %s: no queries annotation", r.Name)
		}
		for _, q := range lines {
			q = strings.TrimSpace(q)
			if !strings.Contains(r.Query, q) {
				t.Fatalf("alert %s: query %q is not part of its expression %q", r.Name, q, r.Query)
			}
			out = append(out, q)
		}
	}
	return out
}

// startPrometheus runs Prometheus scraping target every half second, with
// the rules of rulesFile, and returns its API's base URL.
func startPrometheus(t *testing.T, bin, target, rulesFile string) string {
	t.Helper()
	dir := t.TempDir()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cfg := fmt.Sprintf(`global:
  scrape_interval: 500ms
  evaluation_interval: 500ms
rule_files:
  - %q
scrape_configs:
  - job_name: observability
    static_configs:
      - targets: [%q]
`, rulesFile, target)
	cfgPath := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	logf, err := os.Create(filepath.Join(dir, "prometheus.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--config.file="+cfgPath, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--log.level=warn")
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
		logf.Close()
		if t.Failed() {
			if b, err := os.ReadFile(logf.Name()); err == nil {
				t.Logf("prometheus log:\n%s", b)
			}
		}
	})
	api := "http://" + addr
	end := time.Now().Add(deadline)
	for {
		resp, err := http.Get(api + "/-/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return api
			}
		}
		select {
		case <-exited:
			t.Fatal("prometheus exited")
		default:
		}
		if time.Now().After(end) {
			t.Fatal("prometheus not ready")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// query runs an instant query and returns how many series it returned.
func query(api, q string) (int, error) {
	resp, err := http.Get(api + "/api/v1/query?query=" + url.QueryEscape(q))
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var r struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			Result []json.RawMessage `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return 0, err
	}
	if r.Status != "success" {
		return 0, fmt.Errorf("query %q: %s", q, r.Error)
	}
	return len(r.Data.Result), nil
}

// waitSeries waits until every query returns at least one series.
func waitSeries(t *testing.T, api string, queries []string) {
	t.Helper()
	end := time.Now().Add(deadline)
	for {
		var empty []string
		for _, q := range queries {
			n, err := query(api, q)
			if err != nil {
				t.Fatal(err) // a query Prometheus refuses never gets better
			}
			if n == 0 {
				empty = append(empty, q)
			}
		}
		if len(empty) == 0 {
			return
		}
		if time.Now().After(end) {
			sort.Strings(empty)
			t.Fatalf("queries without series:\n%s", strings.Join(empty, "\n"))
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// waitRulesHealthy waits until Prometheus has evaluated every alerting rule
// without error.
func waitRulesHealthy(t *testing.T, api string) {
	t.Helper()
	end := time.Now().Add(deadline)
	for {
		var pending []string
		for _, r := range alertRules(t, api) {
			switch r.Health {
			case "ok":
			case "err":
				t.Fatalf("rule %s: %s", r.Name, r.LastError)
			default:
				pending = append(pending, r.Name+": "+r.Health)
			}
		}
		if len(pending) == 0 {
			return
		}
		if time.Now().After(end) {
			t.Fatalf("rules not evaluated: %v", pending)
		}
		time.Sleep(250 * time.Millisecond)
	}
}
