package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"

	"github.com/ragproxy/ragproxy/compat/openaitest"
	"github.com/ragproxy/ragproxy/observability"
	"github.com/ragproxy/ragproxy/upstream"
)

// lockedBuffer is a log sink safe for the server's goroutines.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// lines returns the JSON log lines whose msg is "request".
func (b *lockedBuffer) lines(t *testing.T) []map[string]any {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(b.buf.String()), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("log line is not JSON: %q", l)
		}
		if m["msg"] == "request" {
			out = append(out, m)
		}
	}
	return out
}

// newMetrics returns Metrics without runtime collectors, so gathered
// families are only ragproxy's.
func newMetrics(t testing.TB) *observability.Metrics {
	t.Helper()
	m, err := observability.New(observability.Config{Models: []string{"ragproxy", "gpt-4o-mini"},
		Upstreams: []string{"primary", "fallback"}, Tasks: Tasks(),
		Stages: []string{"analysis", "embed", "pages", "communities", "chunks", "context"}, NoRuntimeMetrics: true})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// metricValue returns the value of the series of name whose labels include
// want: a counter's or gauge's value, a histogram's sample count. Absent
// series read as 0.
func metricValue(t testing.TB, reg prometheus.Gatherer, name string, want map[string]string) float64 {
	t.Helper()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	total := 0.0
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			if !hasLabels(m, want) {
				continue
			}
			switch {
			case m.Counter != nil:
				total += m.Counter.GetValue()
			case m.Gauge != nil:
				total += m.Gauge.GetValue()
			case m.Histogram != nil:
				total += float64(m.Histogram.GetSampleCount())
			}
		}
	}
	return total
}

func hasLabels(m *dto.Metric, want map[string]string) bool {
	got := map[string]string{}
	for _, l := range m.GetLabel() {
		got[l.GetName()] = l.GetValue()
	}
	for k, v := range want {
		if got[k] != v {
			return false
		}
	}
	return true
}

func TestMetricsStreamAndCompletion(t *testing.T) {
	m := newMetrics(t)
	var logs lockedBuffer
	obs := &MetricsObserver{Metrics: m, Logger: slog.New(slog.NewJSONHandler(&logs, nil))}
	h := newHarness(t, harnessOpts{cfg: Config{Observer: obs, Metrics: m.Handler()}})

	resp, body := h.post(t, "/chat/completions", `{"model":"ragproxy","stream":true,"messages":[{"role":"user","content":"one two three"}]}`)
	if resp.StatusCode != http.StatusOK || !strings.HasSuffix(body, "data: [DONE]\n\n") {
		t.Fatalf("stream: %d %q", resp.StatusCode, body)
	}
	resp, body = h.post(t, "/chat/completions", `{"model":"ragproxy","messages":[{"role":"user","content":"one two"}]}`)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("completion: %d %s", resp.StatusCode, body)
	}
	resp, _ = h.post(t, "/chat/completions", `{"messages":[]}`)
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("bad request: got %d", resp.StatusCode)
	}
	resp, _ = h.post(t, "/chat/completions", `{"model":"ragproxy","messages":[{"role":"user","content":"x"}]}`, "X-OpenWebUI-Task", "title_generation")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("task: %d", resp.StatusCode)
	}

	reg := m.Registry()
	chat := "/v1/chat/completions"
	tests := []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"ragproxy_requests_total", map[string]string{"route": chat, "code": "200", "stream": "true", "task": "chat"}, 1},
		{"ragproxy_requests_total", map[string]string{"route": chat, "code": "200", "stream": "false", "task": "chat"}, 1},
		{"ragproxy_requests_total", map[string]string{"route": chat, "code": "400"}, 1},
		{"ragproxy_requests_total", map[string]string{"route": chat, "code": "200", "task": "title_generation"}, 1},
		{"ragproxy_upstream_requests_total", map[string]string{"upstream": "primary", "outcome": "success"}, 3},
		{"ragproxy_failovers_total", nil, 0},
		{"ragproxy_inflight_streams", nil, 0},
		{"gen_ai_server_time_to_first_token_seconds", map[string]string{"gen_ai_request_model": "ragproxy"}, 1},
		{"gen_ai_client_token_usage", map[string]string{"gen_ai_token_type": "input"}, 3},
		{"gen_ai_client_token_usage", map[string]string{"gen_ai_token_type": "output"}, 3},
		{"gen_ai_client_operation_duration_seconds", map[string]string{"error_type": ""}, 3},
		{"ragproxy_stream_duration_seconds", nil, 1},
		{"ragproxy_overhead_seconds", nil, 3},
	}
	for _, tc := range tests {
		if got := metricValue(t, reg, tc.name, tc.labels); got != tc.want {
			t.Errorf("%s%v = %v, want %v", tc.name, tc.labels, got, tc.want)
		}
	}

	// /metrics serves the same registry.
	resp, err := http.Get(strings.TrimSuffix(h.URL, "/v1") + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	exposition := string(b)
	if resp.StatusCode != http.StatusOK || !strings.Contains(exposition, "ragproxy_requests_total") {
		t.Errorf("GET /metrics: %d\n%.300s", resp.StatusCode, exposition)
	}
	if n, err := testutil.GatherAndCount(reg, "ragproxy_requests_total"); err != nil || n < 4 {
		t.Errorf("ragproxy_requests_total series = %d, %v; want at least 4", n, err)
	}

	lines := logs.lines(t)
	var got []string
	for _, l := range lines {
		got = append(got, l["route"].(string)+" "+jsonString(l["status"])+" stream="+jsonString(l["stream"]))
		if l["route"] == chat && l["status"] == 200.0 {
			if _, ok := l["request_id"].(string); !ok {
				t.Errorf("log line without request_id: %v", l)
			}
			if _, ok := l["output_tokens"]; !ok {
				t.Errorf("log line without tokens: %v", l)
			}
		}
	}
	want := []string{chat + " 200 stream=true", chat + " 200 stream=false", chat + " 400 stream=false", chat + " 200 stream=false"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("request log lines (-want +got):\n%s", diff)
	}
	if ttft, ok := lines[0]["ttft_ms"].(float64); !ok || ttft <= 0 {
		t.Errorf("stream log line has no ttft_ms: %v", lines[0])
	}
}

func jsonString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestMetricsAbandonedStream checks the in-flight gauge returns to zero and
// the disconnect is counted when a client walks away mid-stream.
func TestMetricsAbandonedStream(t *testing.T) {
	m := newMetrics(t)
	h := newHarness(t, harnessOpts{
		cfg: Config{Observer: &MetricsObserver{Metrics: m}},
		fake: openaitest.Config{ChunkDelay: 20 * time.Millisecond, Reply: func(*openaitest.Request) openaitest.Reply {
			return openaitest.Reply{Content: strings.Repeat("word ", 400)}
		}},
	})
	reg := m.Registry()
	req, err := newStreamRequest(waitCtx(t), h.URL, `{"stream":true,"messages":[{"role":"user","content":"x"}]}`)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := httpClientNoPool().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := readFrames(resp.Body, 2); err != nil {
		t.Fatal(err)
	}
	if got := metricValue(t, reg, "ragproxy_inflight_streams", nil); got != 1 {
		t.Errorf("in-flight streams while streaming = %v, want 1", got)
	}
	resp.Body.Close() // the client goes away

	if !waitFor(waitCtx(t), func() bool { return metricValue(t, reg, "ragproxy_client_disconnects_total", nil) == 1 }) {
		t.Fatal("the disconnect was never counted")
	}
	if got := metricValue(t, reg, "ragproxy_inflight_streams", nil); got != 0 {
		t.Errorf("in-flight streams after the client left = %v, want 0", got)
	}
	if got := metricValue(t, reg, "gen_ai_client_operation_duration_seconds", map[string]string{"error_type": "canceled"}); got != 1 {
		t.Errorf("cancelled operations = %v, want 1", got)
	}
	fake, err := h.Fake.Wait(waitCtx(t), 0)
	if err != nil {
		t.Fatal(err)
	}
	if !fake.Canceled {
		t.Error("the upstream request was not cancelled")
	}
}

// waitFor polls cond until it holds or ctx ends.
func waitFor(ctx context.Context, cond func() bool) bool {
	for !cond() {
		select {
		case <-ctx.Done():
			return false
		case <-time.After(5 * time.Millisecond):
		}
	}
	return true
}

// reportingGrounder reports one retrieval to the observer, as grounding.Grounder does, and leaves the request as
// it is.
type reportingGrounder struct {
	obs *MetricsObserver
}

func (g reportingGrounder) Ground(ctx context.Context, _ *GroundRequest) (*Grounding, error) {
	g.obs.ObserveRetrieval(ctx, Retrieval{Confidence: 0.4, Degraded: "embed-timeout", Stages: []observability.StageTiming{
		{Stage: "analysis", Duration: time.Millisecond}, {Stage: "embed", Duration: 2 * time.Millisecond},
		{Stage: "pages", Duration: 3 * time.Millisecond}, {Stage: "chunks", Duration: time.Millisecond},
		{Stage: "context", Duration: time.Millisecond}}})
	return nil, nil
}

func TestMetricsRetrievalStages(t *testing.T) {
	m := newMetrics(t)
	var logs lockedBuffer
	obs := &MetricsObserver{Metrics: m, Logger: slog.New(slog.NewJSONHandler(&logs, nil))}
	h := newHarness(t, harnessOpts{cfg: Config{Observer: obs, Grounder: reportingGrounder{obs}}})

	resp, body := h.post(t, "/chat/completions", `{"model":"ragproxy","messages":[{"role":"user","content":"When does enrolment for the autumn semester open?"}]}`)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("chat: %d %s", resp.StatusCode, body)
	}
	reg := m.Registry()
	for _, stage := range []string{"analysis", "embed", "pages", "chunks", "context"} {
		if got := metricValue(t, reg, "ragproxy_retrieval_stage_duration_seconds", map[string]string{"stage": stage}); got != 1 {
			t.Errorf("stage %s observations = %v, want 1", stage, got)
		}
	}
	if got := metricValue(t, reg, "ragproxy_retrieval_confidence", nil); got != 1 {
		t.Errorf("confidence observations = %v, want 1", got)
	}
	if got := metricValue(t, reg, "ragproxy_retrieval_degraded_total", map[string]string{"reason": "embed-timeout"}); got != 1 {
		t.Errorf("degraded retrievals = %v, want 1", got)
	}
	lines := logs.lines(t)
	if len(lines) != 1 {
		t.Fatalf("got %d request log lines, want 1", len(lines))
	}
	stages, ok := lines[0]["retrieval"].(map[string]any)
	if !ok || stages["embed_ms"] == nil || stages["analysis_ms"] == nil {
		t.Errorf("log line lacks retrieval timings: %v", lines[0])
	}
}

// TestMetricsUpstreamAttempts checks that every attempt behind a request is
// counted once, under the upstream it went to and with its own outcome, and
// that only a request sent to the fallback counts as a failover.
func TestMetricsUpstreamAttempts(t *testing.T) {
	tests := []struct {
		name       string
		client     upstream.Config
		faults     []openaitest.Fault
		fbFaults   []openaitest.Fault
		wantStatus int
		want       map[upstreamSeries]float64
		failovers  float64
		// wantLog is the request log line's "upstream" ("" = absent) and
		// "failover" fields.
		wantLog string
	}{
		{name: "primary success",
			wantStatus: 200, want: map[upstreamSeries]float64{{"primary", "success"}: 1}, wantLog: "upstream=primary failover=false"},
		{name: "primary 500 then retry succeeds", faults: []openaitest.Fault{{Status: 500}},
			wantStatus: 200, want: map[upstreamSeries]float64{{"primary", "error"}: 1, {"primary", "success"}: 1},
			wantLog: "upstream=primary failover=false"},
		{name: "primary 429 then fallback success", client: upstream.Config{Retries: -1},
			faults:     []openaitest.Fault{{Status: 429}},
			wantStatus: 200, want: map[upstreamSeries]float64{{"primary", "rate_limited"}: 1, {"fallback", "success"}: 1},
			failovers: 1, wantLog: "upstream=fallback failover=true"},
		{name: "primary 500 twice then fallback success", faults: []openaitest.Fault{{Status: 500}, {Status: 500}},
			wantStatus: 200, want: map[upstreamSeries]float64{{"primary", "error"}: 2, {"fallback", "success"}: 1},
			failovers: 1, wantLog: "upstream=fallback failover=true"},
		{name: "primary first-byte timeout then fallback success",
			client: upstream.Config{Retries: -1, FirstByteTimeout: 100 * time.Millisecond},
			faults: []openaitest.Fault{{Hang: true}}, wantStatus: 200,
			want:      map[upstreamSeries]float64{{"primary", "timeout"}: 1, {"fallback", "success"}: 1},
			failovers: 1, wantLog: "upstream=fallback failover=true"},
		{name: "all attempts fail",
			faults:     []openaitest.Fault{{Drop: true}, {Status: 500}},
			fbFaults:   []openaitest.Fault{{Status: 500}, {Status: 429}},
			wantStatus: 429,
			want: map[upstreamSeries]float64{{"primary", "error"}: 2, {"fallback", "error"}: 1,
				{"fallback", "rate_limited"}: 1},
			failovers: 1, wantLog: "upstream= failover=true"},
		{name: "primary 400 is neither retried nor failed over", faults: []openaitest.Fault{{Status: 400}},
			wantStatus: 400, want: map[upstreamSeries]float64{{"primary", "error"}: 1}, wantLog: "upstream= failover=false"},
	}
	for _, tt := range tests {
		for _, stream := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/stream=%t", tt.name, stream), func(t *testing.T) {
				m := newMetrics(t)
				var logs lockedBuffer
				obs := &MetricsObserver{Metrics: m, Logger: slog.New(slog.NewJSONHandler(&logs, nil))}
				h := newHarness(t, harnessOpts{cfg: Config{Observer: obs}, client: tt.client,
					fallback: &openaitest.Config{Models: []string{"llama3"}}})
				h.Fake.Fail(tt.faults...)
				h.Fallback.Fail(tt.fbFaults...)
				body := fmt.Sprintf(`{"model":"ragproxy","stream":%t,"messages":[{"role":"user","content":"hello"}]}`, stream)
				resp, got := h.post(t, "/chat/completions", body)
				if resp.StatusCode != tt.wantStatus {
					t.Fatalf("status = %d, want %d; body %s", resp.StatusCode, tt.wantStatus, got)
				}

				reg := m.Registry()
				if err := testutil.GatherAndCompare(reg, strings.NewReader(upstreamExposition(t, reg, tt.want, tt.failovers)),
					"ragproxy_upstream_requests_total", "ragproxy_failovers_total"); err != nil {
					t.Error(err)
				}

				lines := logs.lines(t)
				if len(lines) != 1 {
					t.Fatalf("got %d request log lines, want 1", len(lines))
				}
				upstream, _ := lines[0]["upstream"].(string)
				failover, _ := lines[0]["failover"].(bool)
				if diff := cmp.Diff(tt.wantLog, fmt.Sprintf("upstream=%s failover=%t", upstream, failover)); diff != "" {
					t.Errorf("request log line (-want +got):\n%s\n%v", diff, lines[0])
				}
			})
		}
	}
}

// upstreamSeries is one ragproxy_upstream_requests_total series.
type upstreamSeries struct{ upstream, outcome string }

// upstreamExposition renders the expected ragproxy_upstream_requests_total
// series and ragproxy_failovers_total in the text format, with the help
// texts the registry declares.
func upstreamExposition(t *testing.T, reg prometheus.Gatherer, want map[upstreamSeries]float64, failovers float64) string {
	t.Helper()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	help := map[string]string{}
	for _, f := range fams {
		help[f.GetName()] = f.GetHelp()
	}
	var b strings.Builder
	if len(want) > 0 {
		fmt.Fprintf(&b, "# HELP ragproxy_upstream_requests_total %s\n# TYPE ragproxy_upstream_requests_total counter\n",
			help["ragproxy_upstream_requests_total"])
		// In the order the registry gathers them: by label values, labels
		// sorted by name.
		keys := slices.SortedFunc(maps.Keys(want), func(a, b upstreamSeries) int {
			if c := strings.Compare(a.outcome, b.outcome); c != 0 {
				return c
			}
			return strings.Compare(a.upstream, b.upstream)
		})
		for _, k := range keys {
			fmt.Fprintf(&b, "ragproxy_upstream_requests_total{outcome=%q,upstream=%q} %g\n", k.outcome, k.upstream, want[k])
		}
	}
	fmt.Fprintf(&b, "# HELP ragproxy_failovers_total %s\n# TYPE ragproxy_failovers_total counter\nragproxy_failovers_total %g\n",
		help["ragproxy_failovers_total"], failovers)
	return b.String()
}
