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
//
// Before that, right after Connect and before any lock, every panel of the
// client row must show a series: five panels showed "No data" on a
// healthy process while their counters waited for a first increment.
func TestDashboardAndAlertQueries(t *testing.T) {
	prom := ensurePrometheus(t)
	dashboard, atConnect := dashboardQueries(t)

	srv := zktest.StartServer(t)
	proxy := zktest.NewProxy(t, srv.Addr())
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan error, 1)
	begin := make(chan struct{})
	go func() {
		done <- run(ctx, config{
			ZK: proxy.Addr(), Listen: "127.0.0.1:0", Namespace: "observability-test",
			Workers: 3, Hold: 5 * time.Millisecond, Term: time.Second,
			SessionTimeout: 2 * time.Second,
			Ready:          func(addr string) { ready <- addr },
			Begin:          begin,
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

	// Connected, no lock taken yet: the client's panels already have
	// series (0 for the counters, 1 for the connected state).
	waitSeries(t, api, atConnect)
	for _, q := range []string{
		`curator_client_guaranteed_deletes_pending == 0`,
		`curator_client_connection_state{curator_state="connected"} == 1`,
	} {
		waitSeries(t, api, []string{q})
	}
	close(begin)

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
// Grafana dashboard, with its job and instance variables matching any
// value, and, of those, the queries that must return series right after
// Connect: the client row's, but for those over request durations (no
// request has been made yet).
func dashboardQueries(t *testing.T) (all, atConnect []string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "grafana-dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Templating struct {
			List []struct {
				Name     string `json:"name"`
				AllValue string `json:"allValue"`
			} `json:"list"`
		} `json:"templating"`
		Panels []struct {
			Type    string `json:"type"`
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("dashboard: %v", err)
	}
	// Grafana substitutes a variable set to All with its allValue.
	vars := map[string]string{}
	for _, v := range d.Templating.List {
		if v.Name == "job" || v.Name == "instance" {
			vars["$"+v.Name] = v.AllValue
		}
	}
	for _, v := range []string{"$job", "$instance"} {
		if vars[v] == "" {
			t.Fatalf("dashboard: no %s variable with an allValue", v)
		}
	}
	row := ""
	for _, p := range d.Panels {
		if p.Type == "row" {
			row = p.Title
			continue
		}
		for _, tg := range p.Targets {
			if tg.Expr == "" {
				t.Fatalf("dashboard panel %q: a target without expr", p.Title)
			}
			if !strings.Contains(tg.Expr, `job=~"$job"`) || !strings.Contains(tg.Expr, `instance=~"$instance"`) {
				t.Errorf("dashboard panel %q: %s does not filter on $job and $instance", p.Title, tg.Expr)
			}
			q := tg.Expr
			for k, v := range vars {
				q = strings.ReplaceAll(q, k, v)
			}
			all = append(all, q)
			if row == "ZooKeeper client" && !strings.Contains(q, "curator_client_request_duration_seconds") {
				atConnect = append(atConnect, q)
			}
		}
	}
	if len(all) == 0 || len(atConnect) == 0 {
		t.Fatal("dashboard without queries, or without a ZooKeeper client row")
	}
	return all, atConnect
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

// The prometheus.yml shipped with the example is valid for Prometheus's
// own checker (its rules file included) and scrapes the example's default
// -listen address.
func TestPrometheusConfig(t *testing.T) {
	ensurePrometheus(t)
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Fatalf("promtool not on PATH: %v", err)
	}
	if out, err := exec.Command(promtool, "check", "config", "prometheus.yml").CombinedOutput(); err != nil {
		t.Fatalf("promtool check config prometheus.yml: %v\n%s", err, out)
	}
	b, err := os.ReadFile("prometheus.yml")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"`+defaultListen+`"`) {
		t.Errorf("prometheus.yml does not scrape the default -listen address %s", defaultListen)
	}
}
