package observability

import (
	"fmt"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Bucket boundaries the OpenTelemetry GenAI semantic conventions give as
// ExplicitBucketBoundaries (docs/gen-ai/gen-ai-metrics.md).
func operationDurationBuckets() []float64 {
	return []float64{0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92}
}

func tokenUsageBuckets() []float64 {
	return []float64{1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864}
}

func timeToFirstTokenBuckets() []float64 {
	return []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0}
}

// Buckets of ragproxy's own histograms: retrieval stages and the proxy's
// overhead are in-process work measured in milliseconds, so they start lower.
func stageBuckets() []float64 {
	return []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}
}

func overheadBuckets() []float64 {
	return []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5}
}

func confidenceBuckets() []float64 {
	return prometheus.LinearBuckets(0.1, 0.1, 10)
}

// Label names. The gen_ai_* metrics use the OpenTelemetry attribute names with
// dots turned into underscores, as the OpenTelemetry Prometheus exporter does.
const (
	labelOperation = "gen_ai_operation_name"
	labelProvider  = "gen_ai_provider_name"
	labelModel     = "gen_ai_request_model"
	labelTokenType = "gen_ai_token_type"
	labelErrorType = "error_type"

	// operationChat is the gen_ai.operation.name of a chat completion.
	operationChat = "chat"
)

// Config configures a Metrics. The zero value works.
type Config struct {
	// Models is the allow-list of model names kept as label values (the
	// assistant models and the upstream models the proxy serves). Any other
	// model name is recorded as "other". Default: none, so every model is "other".
	Models []string
	// Provider is the gen_ai.provider.name of the upstream, used by Tokens and
	// FirstToken. Default: "openai".
	Provider string
	// Upstreams is the allow-list of upstream names for
	// ragproxy_upstream_requests_total. Default: "primary" and "secondary".
	Upstreams []string
	// Routes is added to the built-in route allow-list (the routes of
	// the HTTP API). Default: none.
	Routes []string
	// Caches is added to the built-in cache names ("response", "retrieval",
	// "analysis", "embedding"). Default: none.
	Caches []string
	// Tasks are the task label's values besides "chat" (an ordinary request): the kinds of background task the
	// gateway recognises (server.Tasks). Any other task is Other. Default: none.
	Tasks []string
	// Stages are the retrieval stages ragproxy_retrieval_stage_duration_seconds names (retrieval.Stages).
	// Any other stage is Other. Default: none.
	Stages []string
	// NoRuntimeMetrics leaves out the Go runtime and process collectors.
	// Default: false (they are registered).
	NoRuntimeMetrics bool
	// Now is the clock stream recorders read. Default: time.Now.
	Now func() time.Time
}

// Metrics owns ragproxy's Prometheus registry and every metric in it.
type Metrics struct {
	reg *prometheus.Registry
	now func() time.Time

	provider  string
	models    labelSet
	providers labelSet
	upstreams labelSet
	routes    labelSet
	caches    labelSet
	tasks     labelSet
	stages    labelSet
	results   labelSet
	outcomes  labelSet
	errTypes  labelSet
	backends  labelSet

	requests       *prometheus.CounterVec
	opDuration     *prometheus.HistogramVec
	tokenUsage     *prometheus.HistogramVec
	ttft           *prometheus.HistogramVec
	streamDuration *prometheus.HistogramVec
	stageDuration  *prometheus.HistogramVec
	confidence     prometheus.Histogram
	retrievalEmpty prometheus.Counter
	degraded       *prometheus.CounterVec
	cacheRequests  *prometheus.CounterVec
	upstreamReqs   *prometheus.CounterVec
	failovers      prometheus.Counter
	inflight       prometheus.Gauge
	disconnects    prometheus.Counter
	overhead       prometheus.Histogram
	indexInfo      *prometheus.GaugeVec
	indexPages     *prometheus.GaugeVec
	indexReloads   *prometheus.CounterVec
	faqAnswers     *prometheus.CounterVec
	indexChunks    *prometheus.GaugeVec
	indexBuilt     *prometheus.GaugeVec
	backendUp      *prometheus.GaugeVec
	answers        *prometheus.CounterVec
	feedback       *prometheus.CounterVec
	questionsLost  *prometheus.CounterVec
}

// New builds a Metrics with a fresh registry holding every ragproxy metric.
func New(cfg Config) (*Metrics, error) {
	m := &Metrics{
		reg:      prometheus.NewRegistry(),
		now:      cfg.Now,
		provider: cfg.Provider,
		models:   newLabelSet(cfg.Models),
		routes:   newLabelSet(defaultRoutes(), cfg.Routes),
		caches:   newLabelSet(defaultCaches(), cfg.Caches),
		tasks:    newLabelSet([]string{chatTask}, cfg.Tasks),
		stages:   newLabelSet(cfg.Stages),
		results:  newLabelSet(knownCacheResults()),
		outcomes: newLabelSet(knownOutcomes()),
		errTypes: newLabelSet(knownErrTypes()),
		backends: newLabelSet(knownBackends()),
	}
	if m.now == nil {
		m.now = time.Now
	}
	if m.provider == "" {
		m.provider = "openai"
	}
	m.providers = newLabelSet(knownProviders(), []string{m.provider})
	upstreams := cfg.Upstreams
	if len(upstreams) == 0 {
		upstreams = []string{"primary", "secondary"}
	}
	m.upstreams = newLabelSet(upstreams)

	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "ragproxy_requests_total",
		Help: "HTTP requests served, by route pattern, status code, whether the response streamed, and Open WebUI task.",
	}, []string{"route", "code", "stream", "task"})
	m.opDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "gen_ai_client_operation_duration_seconds",
		Help:    "GenAI operation duration: one upstream model call, from request to last byte (OpenTelemetry gen_ai.client.operation.duration).",
		Buckets: operationDurationBuckets(),
	}, []string{labelOperation, labelProvider, labelModel, labelErrorType})
	m.tokenUsage = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "gen_ai_client_token_usage",
		Help:    "Number of input and output tokens used per operation (OpenTelemetry gen_ai.client.token.usage).",
		Buckets: tokenUsageBuckets(),
	}, []string{labelOperation, labelProvider, labelModel, labelTokenType})
	m.ttft = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "gen_ai_server_time_to_first_token_seconds",
		Help:    "Time from request arrival to the first content token written to the client (OpenTelemetry gen_ai.server.time_to_first_token).",
		Buckets: timeToFirstTokenBuckets(),
	}, []string{labelOperation, labelProvider, labelModel})
	m.streamDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "ragproxy_stream_duration_seconds",
		Help:    "Time from request arrival to the end of a streamed response, recorded by the stream writer.",
		Buckets: operationDurationBuckets(),
	}, []string{labelModel})
	m.stageDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "ragproxy_retrieval_stage_duration_seconds",
		Help:    "Time spent in each retrieval stage.",
		Buckets: stageBuckets(),
	}, []string{"stage"})
	m.confidence = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "ragproxy_retrieval_confidence",
		Help:    "Confidence of the best retrieved passage, in [0, 1].",
		Buckets: confidenceBuckets(),
	})
	m.retrievalEmpty = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "ragproxy_retrieval_empty_total",
		Help: "Retrievals where nothing scored above the confidence floor (answered with \"I don't know\").",
	})
	m.degraded = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "ragproxy_retrieval_degraded_total",
		Help: "Retrievals answered from the lexical lists alone because the query embeddings failed or ran out of time, by reason.",
	}, []string{"reason"})
	m.cacheRequests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "ragproxy_cache_requests_total",
		Help: "Cache lookups by cache and result (hit, miss, error).",
	}, []string{"cache", "result"})
	m.upstreamReqs = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "ragproxy_upstream_requests_total",
		Help: "Calls to upstream model servers by upstream and outcome.",
	}, []string{"upstream", "outcome"})
	m.failovers = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "ragproxy_failovers_total",
		Help: "Requests moved from the primary upstream to the secondary one.",
	})
	m.inflight = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "ragproxy_inflight_streams",
		Help: "Streaming responses currently being written.",
	})
	m.disconnects = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "ragproxy_client_disconnects_total",
		Help: "Streams the client abandoned before the end.",
	})
	m.overhead = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "ragproxy_overhead_seconds",
		Help:    "Time spent in the proxy itself per request (analysis, retrieval, assembly), upstream time excluded.",
		Buckets: overheadBuckets(),
	})
	m.indexInfo = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "ragproxy_index_info",
		Help: "The loaded index: always 1, with its name, version and embedding model as labels.",
	}, []string{"name", "version", "embedder"})
	m.indexReloads = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "ragproxy_index_reloads_total",
		Help: "Checks for a new index version while serving, by result: switched, unchanged or failed.",
	}, []string{"result"})
	m.faqAnswers = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "ragproxy_faq_answers_total",
		Help: "Questions the FAQ matched, by use: direct (answered from the FAQ without a model) or evidence (the entry led the context).",
	}, []string{"kind"})
	m.indexPages = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "ragproxy_index_pages",
		Help: "Pages in the loaded index.",
	}, []string{"name"})
	m.indexChunks = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "ragproxy_index_chunks",
		Help: "Chunks in the loaded index.",
	}, []string{"name"})
	// The served index's build time, not the time an ingest run ended: ingest runs as its own process (a CronJob,
	// `docker compose run`), which no Prometheus scrapes, and what an alert on a stale index asks is how old the
	// answers' pages are.
	m.indexBuilt = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "ragproxy_index_build_timestamp_seconds",
		Help: "Unix time the loaded index version was built.",
	}, []string{"name"})
	m.backendUp = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "ragproxy_backend_up",
		Help: "Whether a configured backend (qdrant, neo4j, redis) answered the last readiness probe: 1 or 0.",
	}, []string{"backend"})

	cs := []prometheus.Collector{
		m.requests, m.opDuration, m.tokenUsage, m.ttft, m.streamDuration,
		m.stageDuration, m.confidence, m.retrievalEmpty, m.degraded, m.cacheRequests,
		m.upstreamReqs, m.failovers, m.inflight, m.disconnects, m.overhead,
		m.indexInfo, m.indexPages, m.indexChunks, m.indexReloads, m.faqAnswers,
		m.indexBuilt, m.backendUp,
	}
	cs = append(cs, m.insightsCollectors()...)
	if !cfg.NoRuntimeMetrics {
		cs = append(cs,
			collectors.NewGoCollector(),
			collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		)
	}
	for _, c := range cs {
		if err := m.reg.Register(c); err != nil {
			return nil, fmt.Errorf("observability: register metric: %w", err)
		}
	}
	return m, nil
}

// Registry returns the registry the metrics live in, for packages that add
// their own collectors.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the registry in the Prometheus exposition format for
// GET /metrics. Errors while gathering are counted in
// promhttp_metric_handler_errors_total in the same registry.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// Model returns the label value recorded for a model name: the name itself
// when it is in Config.Models, "other" otherwise.
func (m *Metrics) Model(name string) string { return m.models.bound(name) }

// ObserveRequest counts one finished HTTP request. route is the route pattern
// (not the raw path); task is Open WebUI's task name, "" for a user turn.
func (m *Metrics) ObserveRequest(route string, code int, stream bool, task string) {
	m.requests.WithLabelValues(m.routes.bound(route), codeLabel(code), boolLabel(stream), m.taskLabel(task)).Inc()
}

// StreamStarted adds one to ragproxy_inflight_streams. Every call must be
// matched by one StreamEnded, deferred so it also runs on cancellation; a
// StreamRecorder does this pairing itself.
func (m *Metrics) StreamStarted() { m.inflight.Inc() }

// StreamEnded subtracts one from ragproxy_inflight_streams.
func (m *Metrics) StreamEnded() { m.inflight.Dec() }

// ClientDisconnect counts a stream the client abandoned.
func (m *Metrics) ClientDisconnect() { m.disconnects.Inc() }

// FirstToken records the time to first token of a chat completion.
func (m *Metrics) FirstToken(model string, d time.Duration) {
	m.ttft.WithLabelValues(operationChat, m.provider, m.Model(model)).Observe(seconds(d))
}

// Tokens records the input and output tokens of one chat completion; a count
// of 0 or less is treated as unknown and not recorded (the conventions forbid
// reporting usage that is not available).
func (m *Metrics) Tokens(model string, in, out int) {
	model = m.Model(model)
	if in > 0 {
		m.tokenUsage.WithLabelValues(operationChat, m.provider, model, "input").Observe(float64(in))
	}
	if out > 0 {
		m.tokenUsage.WithLabelValues(operationChat, m.provider, model, "output").Observe(float64(out))
	}
}

// Operation records one upstream chat call. errType is "" on success, an HTTP
// status code ("429", "502") or one of "timeout", "canceled", "connection",
// "invalid_response"; anything else is recorded as "_OTHER".
func (m *Metrics) Operation(model, provider, errType string, d time.Duration) {
	m.opDuration.WithLabelValues(operationChat, m.providers.bound(provider), m.Model(model), m.errTypeLabel(errType)).Observe(seconds(d))
}

// RetrievalStage records the time one retrieval stage took; a stage not in
// Config.Stages is recorded as Other.
func (m *Metrics) RetrievalStage(stage string, d time.Duration) {
	m.stageDuration.WithLabelValues(m.stages.bound(stage)).Observe(seconds(d))
}

// RetrievalConfidence records the confidence of a retrieval's best passage.
func (m *Metrics) RetrievalConfidence(v float64) { m.confidence.Observe(v) }

// RetrievalEmpty counts a retrieval that found nothing above the floor.
func (m *Metrics) RetrievalEmpty() { m.retrievalEmpty.Inc() }

// RetrievalDegraded counts a retrieval without query vectors, by its reason ("embed-timeout", "embed-error";
// any other is counted as "other", so the label stays bounded).
func (m *Metrics) RetrievalDegraded(reason string) {
	switch reason {
	case "embed-timeout", "embed-error":
	default:
		reason = "other"
	}
	m.degraded.WithLabelValues(reason).Inc()
}

// Cache counts one lookup in a cache ("response", "retrieval", "analysis",
// "embedding" or a name in Config.Caches) with result "hit", "miss" or "error".
func (m *Metrics) Cache(cache, result string) {
	m.cacheRequests.WithLabelValues(m.caches.bound(cache), m.results.bound(result)).Inc()
}

// Upstream counts one call to an upstream (a name in Config.Upstreams) with
// outcome "success", "error", "timeout", "rate_limited" or "canceled".
func (m *Metrics) Upstream(name, outcome string) {
	m.upstreamReqs.WithLabelValues(m.upstreams.bound(name), m.outcomes.bound(outcome)).Inc()
}

// Failover counts a request moved to the secondary upstream.
func (m *Metrics) Failover() { m.failovers.Inc() }

// Overhead records the time a request spent in the proxy itself, upstream
// time excluded.
func (m *Metrics) Overhead(d time.Duration) { m.overhead.Observe(seconds(d)) }

// SetIndexInfo publishes the loaded index. It replaces any earlier info for
// the same index name, so a reload leaves exactly one info series per name.
// The values come from the index manifest, not from clients.
func (m *Metrics) SetIndexInfo(name, version, embedder string, pages, chunks int) {
	m.indexInfo.DeletePartialMatch(prometheus.Labels{"name": name})
	m.indexInfo.WithLabelValues(name, version, embedder).Set(1)
	m.indexPages.WithLabelValues(name).Set(float64(pages))
	m.indexChunks.WithLabelValues(name).Set(float64(chunks))
}

// IndexReload counts one check for a new index version while serving, with result "switched", "unchanged" or
// "failed".
func (m *Metrics) IndexReload(result string) {
	switch result {
	case "switched", "unchanged", "failed":
		m.indexReloads.WithLabelValues(result).Inc()
	}
}

// FAQAnswer counts a question the FAQ matched, with kind "direct" or "evidence".
func (m *Metrics) FAQAnswer(kind string) {
	switch kind {
	case "direct", "evidence":
		m.faqAnswers.WithLabelValues(kind).Inc()
	}
}

// SetIndexBuilt publishes the build time of the loaded index version (its manifest's built_at); call it with
// SetIndexInfo on each load.
func (m *Metrics) SetIndexBuilt(name string, t time.Time) {
	m.indexBuilt.WithLabelValues(name).Set(float64(t.UnixNano()) / 1e9)
}

// BackendUp records a readiness probe of a backend: "qdrant", "neo4j" or "redis" (anything else is Other).
func (m *Metrics) BackendUp(backend string, up bool) {
	v := 0.0
	if up {
		v = 1
	}
	m.backendUp.WithLabelValues(m.backends.bound(backend)).Set(v)
}
