package observability

import (
	"context"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ragproxy/ragproxy/internal/promtest"
)

// Paths of the deploy files, relative to this package.
const (
	dashboardPath    = "../deploy/grafana/dashboards/ragproxy.json"
	scrapeConfigPath = "../deploy/prometheus/prometheus.yml"
)

// targetEnv names the environment variable that points the dashboard check at
// a running ragproxy (host:port serving /metrics) instead of a synthetic one.
const targetEnv = "RAGPROXY_METRICS_TARGET"

// dashboardExprs returns every PromQL expression of the shipped dashboard.
func dashboardExprs(t *testing.T) []string {
	t.Helper()
	return promtest.DashboardExprs(t, dashboardPath)
}

// TestDashboardCoversMetrics checks, without any binary, that the dashboard
// reads every metric family ragproxy serves (runtime families
// aside) and that every family it reads exists.
func TestDashboardCoversMetrics(t *testing.T) {
	exprs := strings.Join(dashboardExprs(t), "\n")
	m := newTestMetrics(t, Config{Models: []string{"gpt-4o-mini"}, NoRuntimeMetrics: true})
	feedSynthetic(m, 1)
	var families []string
	for _, mf := range gather(t, m) {
		name := mf.GetName()
		families = append(families, name)
		if strings.HasPrefix(name, "promhttp_") {
			continue
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
// TestDashboardErrorsExcludeSuccess checks that a panel grouping calls by error_type counts failures only:
// successful calls carry error_type="" (OpenTelemetry sets error.type on failures alone), and a panel that
// keeps them draws every call as an error.
func TestDashboardErrorsExcludeSuccess(t *testing.T) {
	n := 0
	for _, expr := range dashboardExprs(t) {
		if !strings.Contains(expr, "by ("+labelErrorType+")") {
			continue
		}
		n++
		if !strings.Contains(expr, labelErrorType+`!=""`) {
			t.Errorf("%s: groups by %s without leaving out the successful calls (%s!=\"\")", expr, labelErrorType, labelErrorType)
		}
	}
	if n == 0 {
		t.Error("no panel shows upstream errors by error_type")
	}
}

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
// TestDashboardAgainstRunningServer (dashboard_server_test.go) does the same
// against the real server with real traffic.
func TestDashboardQueriesAgainstPrometheus(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping the Prometheus dashboard check")
	}
	prom, promtool := promtest.Binaries(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	target := os.Getenv(targetEnv)
	synthetic := target == ""
	if synthetic {
		target = startSyntheticTarget(ctx, t)
	}
	srv := promtest.Start(ctx, t, prom, promtool, target)
	srv.WaitForScrapes(ctx, t, 5)

	for _, expr := range dashboardExprs(t) {
		t.Run(expr, func(t *testing.T) {
			res, err := srv.Query(ctx, promtest.GrafanaVars(expr))
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Values) == 0 {
				t.Fatalf("no data (resultType %s)", res.Type)
			}
			if synthetic && !res.HasNumber() {
				t.Errorf("only NaN values: %v", res.Values)
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
