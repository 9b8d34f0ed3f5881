package observability_test

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"testing"

	"github.com/ragproxy/ragproxy/internal/promtest"
)

const dashboardPath = "../deploy/grafana/dashboards/ragproxy.json"

// TestDashboardAgainstRunningServer runs the real ragproxy server, wired as
// `ragproxy serve --index` wires it, in front of fake upstreams with injected
// failures; a real Prometheus scrapes its /metrics every second while rounds
// of real HTTP traffic go through it. Then every PromQL expression of the
// Grafana dashboard must parse and return a number, the traffic must show in
// the counters it was meant to move, the in-flight gauge must be back to 0
// after the abandoned streams, and `promtool check metrics` must accept the
// server's exposition.
func TestDashboardAgainstRunningServer(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping the Prometheus check of the running server")
	}
	prom, promtool := promtest.Binaries(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	p := startProxy(t)
	target, err := url.Parse(p.Base)
	if err != nil {
		t.Fatal(err)
	}
	srv := promtest.Start(ctx, t, prom, promtool, target.Host)
	srv.WaitForScrapes(ctx, t, 2)

	// Rounds of traffic across several scrapes, a scrape after each, so
	// every counter and histogram moves between samples and rates are not
	// zero.
	for n := range 6 {
		p.round(ctx, t, n)
		srv.WaitForNewScrapes(ctx, t, 1)
	}
	srv.WaitForNewScrapes(ctx, t, 2)

	t.Run("promtool check metrics", func(t *testing.T) {
		promtest.CheckMetrics(t, promtool, scrapeBody(t, p.Base+"/metrics"))
	})

	// What the traffic did, read back through Prometheus.
	for _, tc := range []struct{ name, expr string }{
		{"failovers", `ragproxy_failovers_total > 0`},
		{"faq direct answers", `ragproxy_faq_answers_total{kind="direct"} > 0`},
		{"faq evidence", `ragproxy_faq_answers_total{kind="evidence"} > 0`},
		{"fallback answered", `ragproxy_upstream_requests_total{upstream="fallback",outcome="success"} > 0`},
		{"fallback failed", `ragproxy_upstream_requests_total{upstream="fallback",outcome="error"} > 0`},
		{"fallback rate limited", `ragproxy_upstream_requests_total{upstream="fallback",outcome="rate_limited"} > 0`},
		{"upstream error type", `gen_ai_client_operation_duration_seconds_count{error_type="500"} > 0`},
		{"upstream error passed on", `ragproxy_requests_total{route="/v1/chat/completions",code="500"} > 0`},
		{"rate limit passed on", `ragproxy_requests_total{route="/v1/chat/completions",code="429"} > 0`},
		{"bad request", `ragproxy_requests_total{route="/v1/chat/completions",code="400"} > 0`},
		{"unauthorized", `ragproxy_requests_total{code="401"} > 0`},
		{"task", `ragproxy_requests_total{task="title_generation",code="200"} > 0`},
		{"retrieve", `ragproxy_requests_total{route="/v1/retrieve",code="200"} > 0`},
		{"response cache hit", `ragproxy_cache_requests_total{cache="response",result="hit"} > 0`},
		{"response cache miss", `ragproxy_cache_requests_total{cache="response",result="miss"} > 0`},
		{"analysis cache hit", `ragproxy_cache_requests_total{cache="analysis",result="hit"} > 0`},
		{"client disconnects", `ragproxy_client_disconnects_total > 0`},
		{"empty retrieval", `ragproxy_retrieval_empty_total > 0`},
		{"time to first token", `gen_ai_server_time_to_first_token_seconds_count{gen_ai_request_model="` + assistant + `"} > 0`},
		{"in-flight streams back to 0", `sum(ragproxy_inflight_streams) == 0`},
	} {
		t.Run("traffic/"+tc.name, func(t *testing.T) {
			res, err := srv.Query(ctx, tc.expr)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Values) == 0 {
				t.Errorf("%s: no series matches", tc.expr)
			}
		})
	}

	for _, expr := range promtest.DashboardExprs(t, dashboardPath) {
		t.Run("dashboard/"+expr, func(t *testing.T) {
			res, err := srv.Query(ctx, promtest.GrafanaVars(expr))
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Values) == 0 {
				t.Fatalf("no data (resultType %s)", res.Type)
			}
			if !res.HasNumber() {
				t.Errorf("only NaN values: %v", res.Values)
			}
		})
	}
}

// scrapeBody returns the body served at u.
func scrapeBody(t *testing.T, u string) []byte {
	t.Helper()
	res, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: status %d: %.300s", u, res.StatusCode, b)
	}
	return b
}
