package observability

import (
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	dto "github.com/prometheus/client_model/go"
)

// testTasks and testStages are the task kinds and retrieval stages the program configures (server.Tasks and
// retrieval.Stages, which this package does not import), as the dashboard reads them.
func testTasks() []string {
	return []string{"title_generation", "follow_up_generation", "tags_generation", "emoji_generation",
		"query_generation", "image_prompt_generation", "autocomplete_generation", "function_calling",
		"moa_response_generation"}
}

func testStages() []string {
	return []string{"analysis", "embed", "pages", "communities", "chunks", "context"}
}

// newTestMetrics is New with the program's tasks and stages when cfg names none.
func newTestMetrics(t *testing.T, cfg Config) *Metrics {
	t.Helper()
	if cfg.Tasks == nil {
		cfg.Tasks = testTasks()
	}
	if cfg.Stages == nil {
		cfg.Stages = testStages()
	}
	m, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return m
}

func TestObserveRequestLabels(t *testing.T) {
	type req struct {
		route  string
		code   int
		stream bool
		task   string
	}
	tests := []struct {
		name string
		in   req
		want []string // route, code, stream, task
	}{
		{"chat stream", req{"/v1/chat/completions", 200, true, ""}, []string{"/v1/chat/completions", "200", "true", "chat"}},
		{"open webui title task", req{"/v1/chat/completions", 200, false, "title_generation"}, []string{"/v1/chat/completions", "200", "false", "title_generation"}},
		{"unknown route", req{"/wp-admin/login.php", 404, false, ""}, []string{"other", "404", "false", "chat"}},
		{"raw path instead of pattern", req{"/v1/models/gpt-4o", 200, false, ""}, []string{"other", "200", "false", "chat"}},
		{"unknown task", req{"/v1/chat/completions", 200, true, "made_up_task"}, []string{"/v1/chat/completions", "200", "true", "other"}},
		{"invalid code", req{"/healthz", 0, false, ""}, []string{"/healthz", "other", "false", "chat"}},
		{"code too large", req{"/readyz", 1000, false, ""}, []string{"/readyz", "other", "false", "chat"}},
		{"upstream error", req{"/v1/chat/completions", 502, true, ""}, []string{"/v1/chat/completions", "502", "true", "chat"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newTestMetrics(t, Config{NoRuntimeMetrics: true})
			m.ObserveRequest(tt.in.route, tt.in.code, tt.in.stream, tt.in.task)
			if n := testutil.CollectAndCount(m.requests); n != 1 {
				t.Fatalf("series = %d, want 1", n)
			}
			if got := testutil.ToFloat64(m.requests.WithLabelValues(tt.want...)); got != 1 {
				t.Errorf("ragproxy_requests_total%v = %v, want 1", tt.want, got)
			}
		})
	}
}

func TestModelLabelCollapsesToOther(t *testing.T) {
	m := newTestMetrics(t, Config{Models: []string{"gpt-4o-mini", "berkeley-guide"}, NoRuntimeMetrics: true})
	// A client cycling model names must not create series.
	for i := range 50 {
		m.Tokens("attacker-model-"+strings.Repeat("x", i), 10, 20)
	}
	m.Tokens("gpt-4o-mini", 100, 7)
	m.Tokens("berkeley-guide", 0, 3) // unknown input count: only output is recorded

	got := map[string]uint64{}
	for _, s := range histogramSamples(t, m, "gen_ai_client_token_usage") {
		got[s.labels[labelModel]+"/"+s.labels[labelTokenType]] = s.count
	}
	want := map[string]uint64{
		"other/input":           50,
		"other/output":          50,
		"gpt-4o-mini/input":     1,
		"gpt-4o-mini/output":    1,
		"berkeley-guide/output": 1,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("token usage series (-want +got):\n%s", diff)
	}
	if m.Model("") != Other || m.Model("gpt-4o-mini") != "gpt-4o-mini" {
		t.Errorf("Model bounding wrong: %q, %q", m.Model(""), m.Model("gpt-4o-mini"))
	}
}

func TestOperationErrorType(t *testing.T) {
	tests := []struct {
		errType string
		want    string
	}{
		{"", ""},
		{"429", "429"},
		{"502", "502"},
		{"timeout", "timeout"},
		{"canceled", "canceled"},
		{"999", errOther},
		{"42", errOther},
		{"dial tcp 10.0.0.1:443: connection refused", errOther},
	}
	for _, tt := range tests {
		t.Run(tt.errType, func(t *testing.T) {
			m := newTestMetrics(t, Config{NoRuntimeMetrics: true})
			m.Operation("gpt-4o-mini", "openai", tt.errType, 1500*time.Millisecond)
			s := histogramSamples(t, m, "gen_ai_client_operation_duration_seconds")
			if len(s) != 1 {
				t.Fatalf("series = %d, want 1", len(s))
			}
			got := s[0].labels
			want := map[string]string{labelOperation: "chat", labelProvider: "openai", labelModel: Other, labelErrorType: tt.want}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("labels (-want +got):\n%s", diff)
			}
			if s[0].sum != 1.5 {
				t.Errorf("sum = %v, want 1.5", s[0].sum)
			}
		})
	}
}

func TestBoundedCounters(t *testing.T) {
	m := newTestMetrics(t, Config{Upstreams: []string{"openai", "azure"}, NoRuntimeMetrics: true})
	m.Cache("response", "hit")
	m.Cache("response", "miss")
	m.Cache("response", "hit")
	m.Cache("redis-cluster-7", "hit") // unknown cache
	m.Cache("retrieval", "stale")     // unknown result
	m.Upstream("openai", "success")
	m.Upstream("azure", "timeout")
	m.Upstream("https://evil.example", "success")
	m.Upstream("openai", "exploded")
	m.RetrievalStage("pages", 3*time.Millisecond)
	m.RetrievalStage("rerank-v9", time.Millisecond)
	m.BackendUp("qdrant", true)
	m.BackendUp("etcd", false)

	tests := []struct {
		name string
		got  float64
		want float64
	}{
		{"cache response hit", testutil.ToFloat64(m.cacheRequests.WithLabelValues("response", "hit")), 2},
		{"cache other hit", testutil.ToFloat64(m.cacheRequests.WithLabelValues(Other, "hit")), 1},
		{"cache retrieval other", testutil.ToFloat64(m.cacheRequests.WithLabelValues("retrieval", Other)), 1},
		{"upstream azure timeout", testutil.ToFloat64(m.upstreamReqs.WithLabelValues("azure", "timeout")), 1},
		{"upstream other success", testutil.ToFloat64(m.upstreamReqs.WithLabelValues(Other, "success")), 1},
		{"upstream openai other", testutil.ToFloat64(m.upstreamReqs.WithLabelValues("openai", Other)), 1},
		{"backend qdrant up", testutil.ToFloat64(m.backendUp.WithLabelValues("qdrant")), 1},
		{"backend other down", testutil.ToFloat64(m.backendUp.WithLabelValues(Other)), 0},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s = %v, want %v", tt.name, tt.got, tt.want)
		}
	}
	var stages []string
	for _, s := range histogramSamples(t, m, "ragproxy_retrieval_stage_duration_seconds") {
		stages = append(stages, s.labels["stage"])
	}
	if diff := cmp.Diff([]string{"other", "pages"}, stages); diff != "" {
		t.Errorf("stage series (-want +got):\n%s", diff)
	}
}

func TestSetIndexInfoReplaces(t *testing.T) {
	m := newTestMetrics(t, Config{NoRuntimeMetrics: true})
	m.SetIndexInfo("berkeley", "v1", "local-hash-256", 700, 5000)
	m.SetIndexInfo("berkeley", "v2", "text-embedding-3-large", 780, 6123)
	want := `
# HELP ragproxy_index_chunks Chunks in the loaded index.
# TYPE ragproxy_index_chunks gauge
ragproxy_index_chunks{name="berkeley"} 6123
# HELP ragproxy_index_info The loaded index: always 1, with its name, version and embedding model as labels.
# TYPE ragproxy_index_info gauge
ragproxy_index_info{embedder="text-embedding-3-large",name="berkeley",version="v2"} 1
# HELP ragproxy_index_pages Pages in the loaded index.
# TYPE ragproxy_index_pages gauge
ragproxy_index_pages{name="berkeley"} 780
`
	if err := testutil.GatherAndCompare(m.Registry(), strings.NewReader(want),
		"ragproxy_index_info", "ragproxy_index_pages", "ragproxy_index_chunks"); err != nil {
		t.Error(err)
	}
}

// The bucket boundaries are the OpenTelemetry GenAI conventions'
// ExplicitBucketBoundaries (docs/gen-ai/gen-ai-metrics.md), copied here from
// the spec text rather than from the code under test.
func TestGenAIBuckets(t *testing.T) {
	m := newTestMetrics(t, Config{NoRuntimeMetrics: true})
	m.Operation("m", "openai", "", time.Second)
	m.Tokens("m", 1, 1)
	m.FirstToken("m", time.Second)
	tests := []struct {
		family string
		want   []float64
	}{
		{"gen_ai_client_operation_duration_seconds", []float64{0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92}},
		{"gen_ai_client_token_usage", []float64{1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864}},
		{"gen_ai_server_time_to_first_token_seconds", []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0}},
	}
	for _, tt := range tests {
		t.Run(tt.family, func(t *testing.T) {
			s := histogramSamples(t, m, tt.family)
			if len(s) == 0 {
				t.Fatal("no series")
			}
			if diff := cmp.Diff(tt.want, s[0].bounds); diff != "" {
				t.Errorf("bucket bounds (-want +got):\n%s", diff)
			}
		})
	}
}

func TestOwnRegistry(t *testing.T) {
	a := newTestMetrics(t, Config{})
	b := newTestMetrics(t, Config{}) // a second New must not collide with the first
	a.Failover()
	if got := testutil.ToFloat64(b.failovers); got != 0 {
		t.Errorf("second Metrics saw the first one's failover: %v", got)
	}
	if a.Registry() == b.Registry() {
		t.Error("two Metrics share a registry")
	}
}

// TestLint runs client_golang's port of promtool's linter over a registry
// holding every metric with data.
func TestLint(t *testing.T) {
	m := newTestMetrics(t, Config{Models: []string{"gpt-4o-mini"}})
	feedSynthetic(m, 1)
	problems, err := promlint.NewWithMetricFamilies(gather(t, m)).Lint()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}
}

// TestPromtoolCheckMetrics pipes the /metrics exposition through the real
// `promtool check metrics`.
func TestPromtoolCheckMetrics(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("promtool not on PATH (Debian package prometheus): skipping promtool check metrics")
	}
	m := newTestMetrics(t, Config{Models: []string{"gpt-4o-mini"}})
	feedSynthetic(m, 1)
	body := scrape(t, m.Handler())
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = strings.NewReader(body)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("promtool check metrics: %v\n%s", err, out)
	}
	if len(strings.TrimSpace(string(out))) > 0 {
		t.Errorf("promtool check metrics reported:\n%s", out)
	}
}

type histSample struct {
	labels map[string]string
	count  uint64
	sum    float64
	bounds []float64
}

func gather(t *testing.T, m *Metrics) []*dto.MetricFamily {
	t.Helper()
	mfs, err := m.Registry().Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	return mfs
}

// histogramSamples returns the series of one histogram family, in the
// registry's (sorted) order.
func histogramSamples(t *testing.T, m *Metrics, family string) []histSample {
	t.Helper()
	var out []histSample
	for _, mf := range gather(t, m) {
		if mf.GetName() != family {
			continue
		}
		for _, metric := range mf.GetMetric() {
			s := histSample{labels: map[string]string{}}
			for _, lp := range metric.GetLabel() {
				s.labels[lp.GetName()] = lp.GetValue()
			}
			h := metric.GetHistogram()
			s.count, s.sum = h.GetSampleCount(), h.GetSampleSum()
			for _, b := range h.GetBucket() {
				s.bounds = append(s.bounds, b.GetUpperBound())
			}
			out = append(out, s)
		}
	}
	return out
}

func TestInsightsMetrics(t *testing.T) {
	m := newTestMetrics(t, Config{NoRuntimeMetrics: true})
	m.Answer("answered")
	m.Answer("faq")
	m.Answer("bogus")
	m.Feedback("down")
	m.QuestionsDropped("store_error", 3)
	got := map[string]float64{}
	for _, mf := range gather(t, m) {
		for _, metric := range mf.GetMetric() {
			key := mf.GetName()
			for _, l := range metric.GetLabel() {
				key += "/" + l.GetValue()
			}
			got[key] = metric.GetCounter().GetValue()
		}
	}
	for key, want := range map[string]float64{"ragproxy_answers_total/answered": 1, "ragproxy_answers_total/faq": 1,
		"ragproxy_answers_total/unanswered": 0, "ragproxy_answers_total/other": 1, "ragproxy_feedback_total/down": 1,
		"ragproxy_feedback_total/up": 0, "ragproxy_question_log_dropped_total/store_error": 3} {
		if got[key] != want {
			t.Errorf("%s = %v, want %v", key, got[key], want)
		}
	}
}
