// Package promtest runs the real Prometheus tools for tests: a prometheus
// server scraping one target every second and answering PromQL instant
// queries through its HTTP API, `promtool check metrics` on an exposition,
// and the PromQL expressions of a Grafana dashboard. Tests using it skip when
// the binaries (Debian package prometheus) are not on PATH.
//
// Its functions are safe for concurrent use; a Server is owned by one test.
package promtest

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
	"strconv"
	"strings"
	"testing"
	"time"
)

// Binaries returns the paths of prometheus and promtool, skipping t when
// either is not on PATH.
func Binaries(t testing.TB) (prometheus, promtool string) {
	t.Helper()
	prometheus, err := exec.LookPath("prometheus")
	if err != nil {
		t.Skip("prometheus not on PATH (Debian package prometheus): skipping")
	}
	promtool, err = exec.LookPath("promtool")
	if err != nil {
		t.Skip("promtool not on PATH (Debian package prometheus): skipping")
	}
	return prometheus, promtool
}

// CheckMetrics pipes a /metrics exposition through `promtool check metrics`
// and fails t on an error or any reported problem.
func CheckMetrics(t testing.TB, promtool string, exposition []byte) {
	t.Helper()
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = bytes.NewReader(exposition)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("promtool check metrics: %v\n%s", err, out)
	}
	if len(bytes.TrimSpace(out)) > 0 {
		t.Errorf("promtool check metrics reported:\n%s", out)
	}
}

// DashboardExprs returns every PromQL expression in a Grafana dashboard JSON
// file: the value of each "expr" key, wherever it is nested (panels, rows,
// templating). It fails t when there is none.
func DashboardExprs(t testing.TB, path string) []string {
	t.Helper()
	raw, err := os.ReadFile(path)
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

// GrafanaVars replaces Grafana's built-in interval variables with values a
// plain Prometheus query accepts. 30s holds several samples at the 1s scrape
// interval Start configures.
func GrafanaVars(expr string) string {
	return strings.NewReplacer("$__rate_interval", "30s", "$__interval", "30s", "$__range", "1m").Replace(expr)
}

// Job is the job name of the scrape Start configures.
const Job = "ragproxy"

// Server is a running prometheus.
type Server struct {
	// URL is the base URL of its HTTP API.
	URL string
}

// Start runs prometheus (the binary at bin) scraping target (host:port
// serving /metrics) every second, with a temporary config and storage. The
// config is validated with promtool first. The process is killed when ctx
// ends and waited for in t.Cleanup; its output is logged if t failed.
func Start(ctx context.Context, t testing.TB, bin, promtool, target string) *Server {
	t.Helper()
	dir := t.TempDir()
	cfg := fmt.Sprintf(`global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: %s
    metrics_path: /metrics
    static_configs:
      - targets: [%q]
`, Job, target)
	cfgPath := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(promtool, "check", "config", cfgPath).CombinedOutput(); err != nil {
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
	return &Server{URL: "http://" + addr}
}

// freeAddr returns a loopback address with a port free a moment ago.
func freeAddr(t testing.TB) string {
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

// WaitForScrapes polls until the server holds at least n successful scrapes
// of the target in the last minute, or fails t after a generous timeout.
func (s *Server) WaitForScrapes(ctx context.Context, t testing.TB, n int) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	q := fmt.Sprintf(`sum_over_time(up{job=%q}[1m]) >= %d`, Job, n)
	for {
		res, err := s.Query(ctx, q)
		if err == nil && len(res.Values) > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("prometheus at %s has not scraped the target %d times (last error: %v)", s.URL, n, err)
		}
		select {
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// WaitForNewScrapes waits until n more successful scrapes than now have
// happened, so samples taken after this call are in Prometheus.
func (s *Server) WaitForNewScrapes(ctx context.Context, t testing.TB, n int) {
	t.Helper()
	count := func() int {
		res, err := s.Query(ctx, fmt.Sprintf(`count_over_time(up{job=%q}[10m])`, Job))
		if err != nil || len(res.Values) == 0 {
			return 0
		}
		f, _ := strconv.ParseFloat(res.Values[0], 64)
		return int(f)
	}
	want := count() + n
	deadline := time.Now().Add(90 * time.Second)
	for count() < want {
		if time.Now().After(deadline) {
			t.Fatalf("prometheus at %s did not scrape %d more times", s.URL, n)
		}
		select {
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// Result is an instant query's result.
type Result struct {
	// Type is Prometheus' resultType: "vector" or "scalar".
	Type string
	// Values are the sample values as Prometheus renders them ("NaN",
	// "0.25"), one per series.
	Values []string
}

// HasNumber reports whether some value is a number other than NaN.
func (r Result) HasNumber() bool {
	for _, v := range r.Values {
		if v != "NaN" {
			return true
		}
	}
	return false
}

// Query evaluates expr as an instant query through /api/v1/query. A parse
// or evaluation error, or a result that is neither a vector nor a scalar of
// numbers, is an error.
func (s *Server) Query(ctx context.Context, expr string) (Result, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+"/api/v1/query?"+url.Values{"query": {expr}}.Encode(), nil)
	if err != nil {
		return Result{}, fmt.Errorf("query %q: %w", expr, err)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return Result{}, fmt.Errorf("query %q: %w", expr, err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		return Result{}, fmt.Errorf("query %q: read: %w", expr, err)
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
		return Result{}, fmt.Errorf("query %q: status %d: decode %q: %w", expr, res.StatusCode, body, err)
	}
	if out.Status != "success" {
		return Result{}, fmt.Errorf("query %q: %s: %s", expr, out.ErrorType, out.Error)
	}
	r := Result{Type: out.Data.ResultType}
	switch r.Type {
	case "vector":
		var vec []struct {
			Value [2]any `json:"value"`
		}
		if err := json.Unmarshal(out.Data.Result, &vec); err != nil {
			return r, fmt.Errorf("query %q: decode vector: %w", expr, err)
		}
		for _, s := range vec {
			r.Values = append(r.Values, fmt.Sprint(s.Value[1]))
		}
	case "scalar":
		var s [2]any
		if err := json.Unmarshal(out.Data.Result, &s); err != nil {
			return r, fmt.Errorf("query %q: decode scalar: %w", expr, err)
		}
		r.Values = append(r.Values, fmt.Sprint(s[1]))
	default:
		return r, fmt.Errorf("query %q: unexpected result type %q", expr, r.Type)
	}
	for _, v := range r.Values {
		if _, err := strconv.ParseFloat(v, 64); err != nil {
			return r, fmt.Errorf("query %q: value %q is not a number: %w", expr, v, err)
		}
	}
	return r, nil
}
