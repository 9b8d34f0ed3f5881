package observability

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Paths of the deploy files, relative to this package.
const (
	dashboardPath    = "../deploy/grafana/dashboards/ragproxy.json"
	scrapeConfigPath = "../deploy/prometheus/prometheus.yml"
)

// targetEnv names the environment variable that points the dashboard check at
// a running ragproxy (host:port serving /metrics) instead of a synthetic one.
const targetEnv = "RAGPROXY_METRICS_TARGET"

// dashboardExprs returns every PromQL expression in the dashboard JSON: the
// value of each "expr" key, wherever it is nested (panels, rows, templating).
func dashboardExprs(t *testing.T) []string {
	t.Helper()
	raw, err := os.ReadFile(dashboardPath)
	if err != nil {
		t.Fatalf("read dashboard: %v", err)
	}
	var doc any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("dashboard is not JSON: %v", err)
	}
	var exprs []string
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, c := range v {
				if s, ok := c.(string); ok && k == "expr" {
					exprs = append(exprs, s)
					continue
				}
				walk(c)
			}
		case []any:
			for _, c := range v {
				walk(c)
			}
		}
	}
	walk(doc)
	if len(exprs) == 0 {
		t.Fatal("dashboard has no PromQL expressions")
	}
	return exprs
}

// grafanaVars replaces Grafana's built-in interval variables with values a
// plain Prometheus query accepts. 30s holds several samples at the check's 1s
// scrape interval.
func grafanaVars(expr string) string {
	return strings.NewReplacer("$__rate_interval", "30s", "$__interval", "30s", "$__range", "1m").Replace(expr)
}

// TestDashboardCoversMetrics checks, without any binary, that the dashboard
// reads every metric family ragproxy serves (runtime and ingest families
// aside) and that every family it reads exists.
func TestDashboardCoversMetrics(t *testing.T) {
	exprs := strings.Join(dashboardExprs(t), "\n")
	m := newTestMetrics(t, Config{Models: []string{"gpt-4o-mini"}, NoRuntimeMetrics: true})
	feedSynthetic(m, 1)
	var families []string
	for _, mf := range gather(t, m) {
		name := mf.GetName()
		families = append(families, name)
		if strings.HasPrefix(name, "ragproxy_ingest_") || strings.HasPrefix(name, "promhttp_") {
			continue // ingest metrics are served by `ragproxy ingest --metrics-listen`, not this dashboard
		}
		if !strings.Contains(exprs, name) {
			t.Errorf("dashboard has no panel reading %s", name)
		}
	}
	for _, word := range strings.FieldsFunc(exprs, func(r rune) bool {
		return !(r == '_' || r == ':' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	}) {
		if !strings.HasPrefix(word, "ragproxy_") && !strings.HasPrefix(word, "gen_ai_") {
			continue
		}
		base := word
		for _, suffix := range []string{"_bucket", "_sum", "_count"} {
			if b, ok := strings.CutSuffix(word, suffix); ok && slices.Contains(families, b) {
				base = b
			}
		}
		if !slices.Contains(families, base) && !isLabelName(word) {
			t.Errorf("dashboard reads %s, which ragproxy does not serve", word)
		}
	}
}

// isLabelName reports whether a gen_ai_ word in an expression is one of the
// label names rather than a metric.
func isLabelName(w string) bool {
	return slices.Contains([]string{labelOperation, labelProvider, labelModel, labelTokenType}, w)
}

// TestPromtoolCheckConfig validates the Prometheus scrape config shipped in deploy/.
func TestPromtoolCheckConfig(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("promtool not on PATH (Debian package prometheus): skipping promtool check config")
	}
	out, err := exec.Command(promtool, "check", "config", scrapeConfigPath).CombinedOutput()
	if err != nil {
		t.Fatalf("promtool check config %s: %v\n%s", scrapeConfigPath, err, out)
	}
}

// TestDashboardQueriesAgainstPrometheus starts a real Prometheus scraping
// ragproxy metrics every second and evaluates every PromQL expression of the
// dashboard through Prometheus' HTTP query API. Each must parse and return
// data. By default the target is an in-test HTTP server exposing a Metrics
// fed with synthetic traffic through the typed methods, and every result must
// also hold a number (not NaN); with RAGPROXY_METRICS_TARGET=host:port it
// scrapes that running ragproxy instead (send it traffic first).
func TestDashboardQueriesAgainstPrometheus(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping the Prometheus dashboard check")
	}
	prom, err := exec.LookPath("prometheus")
	if err != nil {
		t.Skip("prometheus not on PATH (Debian package prometheus): skipping the dashboard check")
	}
	if _, err := exec.LookPath("promtool"); err != nil {
		t.Skip("promtool not on PATH (Debian package prometheus): skipping the dashboard check")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	target := os.Getenv(targetEnv)
	synthetic := target == ""
	if synthetic {
		target = startSyntheticTarget(ctx, t)
	}
	api := startPrometheus(ctx, t, prom, target)
	waitForSamples(ctx, t, api, 5)

	for _, expr := range dashboardExprs(t) {
		t.Run(expr, func(t *testing.T) {
			res, err := query(ctx, api, grafanaVars(expr))
			if err != nil {
				t.Fatal(err)
			}
			if len(res.values) == 0 {
				t.Fatalf("no data (resultType %s)", res.resultType)
			}
			if synthetic && !slices.ContainsFunc(res.values, func(v string) bool { return v != "NaN" }) {
				t.Errorf("only NaN values: %v", res.values)
			}
		})
	}
}

// startSyntheticTarget serves a fresh Metrics on loopback, feeding it a round
// of synthetic traffic every 100ms until ctx ends; it returns host:port.
func startSyntheticTarget(ctx context.Context, t *testing.T) string {
	t.Helper()
	m := newTestMetrics(t, Config{Models: []string{"gpt-4o-mini"}})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", m.Handler())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }() // returns when Close runs below
	t.Cleanup(func() { _ = srv.Close() })

	feedSynthetic(m, 0)
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for round := 1; ; round++ {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				feedSynthetic(m, round)
			}
		}
	}()
	t.Cleanup(func() { <-done }) // ctx is cancelled by the test's deferred cancel first
	return ln.Addr().String()
}

// startPrometheus runs prometheus scraping target every second with a
// temporary config and storage; it returns the base URL of its HTTP API. The
// process is killed when ctx ends and waited for in t.Cleanup.
func startPrometheus(ctx context.Context, t *testing.T, bin, target string) string {
	t.Helper()
	dir := t.TempDir()
	cfg := fmt.Sprintf(`global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: ragproxy
    metrics_path: /metrics
    static_configs:
      - targets: [%q]
`, target)
	cfgPath := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("promtool", "check", "config", cfgPath).CombinedOutput(); err != nil {
		t.Fatalf("promtool check config (test config): %v\n%s", err, out)
	}
	addr := freeAddr(t)
	var logs bytes.Buffer
	cmd := exec.CommandContext(ctx, bin,
		"--config.file="+cfgPath,
		"--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr,
		"--log.level=warn",
	)
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatalf("start prometheus: %v", err)
	}
	t.Cleanup(func() {
		_ = cmd.Wait() // killed by ctx cancellation
		if t.Failed() {
			t.Logf("prometheus output:\n%s", logs.String())
		}
	})
	return "http://" + addr
}

// freeAddr returns a loopback address with a port free a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}

// waitForSamples polls until Prometheus holds at least n successful scrapes
// of the target, or fails after a generous timeout.
func waitForSamples(ctx context.Context, t *testing.T, api string, n int) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	q := fmt.Sprintf(`sum_over_time(up{job="ragproxy"}[1m]) >= %d`, n)
	for {
		res, err := query(ctx, api, q)
		if err == nil && len(res.values) > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("prometheus at %s has not scraped the target %d times (last error: %v)", api, n, err)
		}
		select {
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		case <-time.After(500 * time.Millisecond):
		}
	}
}

type queryResult struct {
	resultType string
	values     []string // sample values as Prometheus renders them ("NaN", "0.25")
}

// query evaluates expr as an instant query through /api/v1/query.
func query(ctx context.Context, api, expr string) (queryResult, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, api+"/api/v1/query?"+url.Values{"query": {expr}}.Encode(), nil)
	if err != nil {
		return queryResult{}, fmt.Errorf("query %q: %w", expr, err)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return queryResult{}, fmt.Errorf("query %q: %w", expr, err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		return queryResult{}, fmt.Errorf("query %q: read: %w", expr, err)
	}
	var out struct {
		Status    string `json:"status"`
		ErrorType string `json:"errorType"`
		Error     string `json:"error"`
		Data      struct {
			ResultType string          `json:"resultType"`
			Result     json.RawMessage `json:"result"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &out); err != nil {
		return queryResult{}, fmt.Errorf("query %q: status %d: decode %q: %w", expr, res.StatusCode, body, err)
	}
	if out.Status != "success" {
		return queryResult{}, fmt.Errorf("query %q: %s: %s", expr, out.ErrorType, out.Error)
	}
	r := queryResult{resultType: out.Data.ResultType}
	switch r.resultType {
	case "vector":
		var vec []struct {
			Value [2]any `json:"value"`
		}
		if err := json.Unmarshal(out.Data.Result, &vec); err != nil {
			return r, fmt.Errorf("query %q: decode vector: %w", expr, err)
		}
		for _, s := range vec {
			r.values = append(r.values, fmt.Sprint(s.Value[1]))
		}
	case "scalar":
		var s [2]any
		if err := json.Unmarshal(out.Data.Result, &s); err != nil {
			return r, fmt.Errorf("query %q: decode scalar: %w", expr, err)
		}
		r.values = append(r.values, fmt.Sprint(s[1]))
	default:
		return r, fmt.Errorf("query %q: unexpected result type %q", expr, r.resultType)
	}
	for _, v := range r.values {
		if _, err := strconv.ParseFloat(v, 64); err != nil {
			return r, fmt.Errorf("query %q: value %q is not a number: %w", expr, v, err)
		}
	}
	return r, nil
}
