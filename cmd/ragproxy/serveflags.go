package main

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/ragproxy/ragproxy/admin"
	"github.com/ragproxy/ragproxy/embedding"
	"github.com/ragproxy/ragproxy/grounding"
	"github.com/ragproxy/ragproxy/index"
	"github.com/ragproxy/ragproxy/ingest"
	"github.com/ragproxy/ragproxy/ingest/summary"
	"github.com/ragproxy/ragproxy/insights"
	"github.com/ragproxy/ragproxy/retrieval"
	"github.com/ragproxy/ragproxy/retrieval/faq"
	"github.com/ragproxy/ragproxy/serve"
	"github.com/ragproxy/ragproxy/server"
	"github.com/ragproxy/ragproxy/upstream"
)

// serveFlags are serve's settings: each flag falls back to an environment variable, then to a default. Most bind
// straight to the fields of cfg; the rest are read into cfg once parsed.
type serveFlags struct {
	cfg                                                                 serve.Config
	apiKeys, adminKeys, corsOrigins, linkHosts                          string
	logLevel, adminIngestOptions, embedOrigins, widgetKeys, questionLog string
	embedTimeout                                                        time.Duration
	keepVersions                                                        int
	up                                                                  upstreamFlags
	backends                                                            backendFlags
	assistants                                                          assistantFlags
}

func parseServeFlags(args []string) (serveFlags, error) {
	return parseServeFlagsFor("serve", args, nil)
}

// parseServeFlagsFor parses serve's flags for the command name, after own, if set, has added the command's own
// flags and set its defaults of serve's.
func parseServeFlagsFor(name string, args []string, own func(*flag.FlagSet)) (serveFlags, error) {
	var f serveFlags
	c, s, g, u := &f.cfg, &f.cfg.Server, &f.cfg.Grounding, &f.cfg.Upstream
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.StringVar(&s.Listen, "listen", envOr("RAGPROXY_LISTEN", "127.0.0.1:8080"), "address to listen on (RAGPROXY_LISTEN)")
	fs.StringVar(&f.apiKeys, "api-keys", envOr("RAGPROXY_API_KEYS", ""), "comma-separated client API keys; unset or empty disables client auth, a list of no keys (\",\") refuses to start (RAGPROXY_API_KEYS)")
	fs.StringVar(&f.corsOrigins, "cors-origins", envOr("RAGPROXY_CORS_ORIGINS", ""), "comma-separated browser origins allowed to call the API, e.g. http://localhost:3000 for Open WebUI's Direct Connections, or *; empty allows none (RAGPROXY_CORS_ORIGINS)")
	fs.StringVar(&f.linkHosts, "link-hosts", envOr("RAGPROXY_LINK_HOSTS", ""), "comma-separated hosts besides the site's own that answers may link to, when the context holds the link (RAGPROXY_LINK_HOSTS)")
	fs.StringVar(&u.Fallback.BaseURL, "fallback-upstream-url", envOr("RAGPROXY_FALLBACK_URL", ""), "fallback upstream base URL, e.g. http://127.0.0.1:11434/v1 (RAGPROXY_FALLBACK_URL)")
	fs.StringVar(&g.AnalysisModel, "analysis-model", envOr("RAGPROXY_ANALYSIS_MODEL", ""), "chat model for query analysis; default --model, which answers (RAGPROXY_ANALYSIS_MODEL)")
	fs.StringVar(&u.Fallback.Model, "fallback-model", envOr("RAGPROXY_FALLBACK_MODEL", ""), "model asked of the fallback upstream (RAGPROXY_FALLBACK_MODEL)")
	fs.DurationVar(&u.FirstByteTimeout, "upstream-timeout", envDuration("RAGPROXY_UPSTREAM_TIMEOUT", 2*time.Minute), "per-attempt time to the upstream's first byte (RAGPROXY_UPSTREAM_TIMEOUT)")
	fs.DurationVar(&u.StreamIdleTimeout, "stream-idle-timeout", envDuration("RAGPROXY_STREAM_IDLE_TIMEOUT", time.Minute), "longest silence between an upstream stream's chunks before it ends with a 504 error (RAGPROXY_STREAM_IDLE_TIMEOUT)")
	fs.DurationVar(&g.AnalysisTimeout, "analysis-timeout", envDuration("RAGPROXY_ANALYSIS_TIMEOUT", retrieval.DefaultAnalysisTimeout), "longest query analysis, retries included, before the heuristic analysis is used instead (RAGPROXY_ANALYSIS_TIMEOUT)")
	fs.DurationVar(&g.AnalysisBudget, "analysis-budget", envDuration("RAGPROXY_ANALYSIS_BUDGET", grounding.DefaultAnalysisBudget), "longest a follow-up waits for the model's query analysis before retrieving on the heuristic one; the analysis goes on for the cache (RAGPROXY_ANALYSIS_BUDGET)")
	fs.DurationVar(&f.embedTimeout, "embed-timeout", envDuration("RAGPROXY_EMBED_TIMEOUT", time.Second), "longest wait for a question's embeddings, without retries, before it is answered from the lexical lists alone (RAGPROXY_EMBED_TIMEOUT)")
	fs.DurationVar(&u.MaxRetryAfter, "max-retry-after", envDuration("RAGPROXY_MAX_RETRY_AFTER", 5*time.Second), "longest Retry-After a retry waits for; longer goes to the fallback (RAGPROXY_MAX_RETRY_AFTER)")
	fs.DurationVar(&u.Backoff, "retry-backoff", envDuration("RAGPROXY_RETRY_BACKOFF", 200*time.Millisecond), "pause before retrying a failed upstream attempt (RAGPROXY_RETRY_BACKOFF)")
	fs.DurationVar(&s.Heartbeat, "heartbeat", envDuration("RAGPROXY_HEARTBEAT", 10*time.Second), "interval of ': ping' comments on waiting streams (RAGPROXY_HEARTBEAT)")
	fs.DurationVar(&s.DrainTimeout, "drain-timeout", envDuration("RAGPROXY_DRAIN_TIMEOUT", 30*time.Second), "how long SIGTERM waits for in-flight streams (RAGPROXY_DRAIN_TIMEOUT)")
	fs.DurationVar(&s.ReadTimeout, "read-timeout", envDuration("RAGPROXY_READ_TIMEOUT", time.Minute), "longest a client may take to send a request, headers and body (RAGPROXY_READ_TIMEOUT)")
	fs.DurationVar(&c.Admin.ReloadInterval, "reload-interval", envDuration("RAGPROXY_RELOAD_INTERVAL", 5*time.Second), "how often to check the index directory's CURRENT and switch to a new version; 0 checks only on SIGHUP and POST /admin/index/reload (RAGPROXY_RELOAD_INTERVAL)")
	fs.IntVar(&s.MaxConns, "max-conns", envInt("RAGPROXY_MAX_CONNS", 0), "connections held open at once; 0: three quarters of the file-descriptor limit (RAGPROXY_MAX_CONNS)")
	fs.IntVar(&s.MaxConnsPerIP, "max-conns-per-ip", envInt("RAGPROXY_MAX_CONNS_PER_IP", 0), "connections from one client address; 0: a quarter of --max-conns (behind a reverse proxy, set it to --max-conns) (RAGPROXY_MAX_CONNS_PER_IP)")
	fs.IntVar(&s.RateLimits.RequestsPerMinute, "rate-limit-rpm", envInt("RAGPROXY_RATE_LIMIT_RPM", 0), "chat requests per minute per client key (per address without client auth); 0: no limit (RAGPROXY_RATE_LIMIT_RPM)")
	fs.IntVar(&s.RateLimits.TokensPerMinute, "rate-limit-tpm", envInt("RAGPROXY_RATE_LIMIT_TPM", 0), "tokens per minute per client key, prompt and answer; 0: no limit (RAGPROXY_RATE_LIMIT_TPM)")
	fs.IntVar(&f.keepVersions, "keep-versions", envInt("RAGPROXY_KEEP_VERSIONS", index.DefaultKeepVersions), "index versions kept on disk when the admin API writes one (RAGPROXY_KEEP_VERSIONS)")
	fs.IntVar(&s.MaxBodyBytes, "max-body-bytes", envInt("RAGPROXY_MAX_BODY_BYTES", 8<<20), "largest accepted request body (RAGPROXY_MAX_BODY_BYTES)")
	fs.BoolVar(&s.ListUpstreamModels, "list-upstream-models", envBool("RAGPROXY_LIST_UPSTREAM_MODELS", false), "add the upstream's models to /v1/models (RAGPROXY_LIST_UPSTREAM_MODELS)")
	fs.StringVar(&f.logLevel, "log-level", envOr("RAGPROXY_LOG_LEVEL", "info"), "debug, info, warn or error (RAGPROXY_LOG_LEVEL)")
	fs.StringVar(&c.Index, "index", envOr("RAGPROXY_INDEX", ""), "index directory to answer from; empty serves a plain pass-through gateway (RAGPROXY_INDEX)")
	fs.StringVar(&c.SiteName, "site-name", envOr("RAGPROXY_SITE_NAME", ""), "the site's name in the grounding prompt and on the chat page; default the assistant's model id (RAGPROXY_SITE_NAME)")
	fs.StringVar(&c.Name, "name", envOr("RAGPROXY_NAME", ""), "model id of the assistant in /v1/models; default the index directory's name (RAGPROXY_NAME)")
	fs.StringVar(&g.FAQFile, "faq", envOr("RAGPROXY_FAQ", ""), "FAQ file (JSONL, JSON or YAML: question, answer, url, optional title and alternatives) whose close matches are answered directly (RAGPROXY_FAQ)")
	fs.Float64Var(&g.FAQDirect, "faq-threshold", faq.DefaultDirectThreshold, "FAQ match score from which the FAQ's answer is given directly, without a model (calibrate with ragproxy eval --faq)")
	fs.StringVar(&g.FAQSite, "faq-site", envOr("RAGPROXY_FAQ_SITE", "evidence"), "what the FAQ entries found in the site's own markup may do: evidence (lead the context), direct (answer close matches like --faq) or off (RAGPROXY_FAQ_SITE)")
	fs.Float64Var(&g.FAQEvidence, "faq-evidence-threshold", faq.DefaultEvidenceThreshold, "FAQ match score from which the entry leads the context")
	fs.BoolVar(&g.SourceEvents, "source-events", envBool("RAGPROXY_SOURCE_EVENTS", false), "send Open WebUI source events on every stream, not only to Open WebUI (RAGPROXY_SOURCE_EVENTS)")
	fs.StringVar(&c.Cache.RedisURL, "redis-url", envOr("REDIS_URL", ""), "Redis for the response cache, redis://[user:password@]host:port/db; empty keeps it in process (REDIS_URL)")
	fs.DurationVar(&s.CacheTTL, "cache-ttl", envDuration("RAGPROXY_CACHE_TTL", time.Hour), "how long cached answers are served (RAGPROXY_CACHE_TTL)")
	fs.BoolVar(&c.Cache.Off, "no-cache", envBool("RAGPROXY_NO_CACHE", false), "disable the response cache (RAGPROXY_NO_CACHE)")
	fs.StringVar(&f.adminIngestOptions, "admin-ingest-options", envOr("RAGPROXY_ADMIN_INGEST_OPTIONS", strings.Join(admin.DefaultJobOptions(), ",")), "comma-separated ingest options an admin ingest job may set; the default describes the site only, and adding upstream, model, backend or summary options lets admin keys spend or send the server's own keys (RAGPROXY_ADMIN_INGEST_OPTIONS)")
	fs.BoolVar(&c.Admin.Jobs.AllowPrivate, "allow-private-ingest", envBool("RAGPROXY_ALLOW_PRIVATE_INGEST", false), "let admin ingest jobs set allow-private and crawl private and loopback addresses (RAGPROXY_ALLOW_PRIVATE_INGEST)")
	fs.StringVar(&c.Admin.Jobs.MirrorRoot, "admin-mirror-root", envOr("RAGPROXY_ADMIN_MIRROR_ROOT", ""), "directory under which an admin ingest job's source may be a directory of saved pages; empty: jobs crawl URLs only (RAGPROXY_ADMIN_MIRROR_ROOT)")
	fs.StringVar(&c.MetricsListen, "metrics-listen", envOr("RAGPROXY_METRICS_LISTEN", ""), "address serving /metrics apart from the API, e.g. 127.0.0.1:9090, which takes /metrics off --listen; empty serves it on --listen (RAGPROXY_METRICS_LISTEN)")
	f.up.register(fs)
	registerRetrieval(fs, &c.Retrieval)
	f.backends.register(fs)
	f.assistants.register(fs)
	fs.StringVar(&f.questionLog, "question-log", envOr("RAGPROXY_QUESTION_LOG", "redacted"), "what the question log keeps of visitors' questions: redacted (e-mail addresses, phone numbers, card-like numbers and long digit runs replaced), full, or off (RAGPROXY_QUESTION_LOG)")
	fs.StringVar(&c.Insights.DB, "insights-db", envOr("RAGPROXY_INSIGHTS_DB", ""), "database of the question log, feedback and added FAQ entries: a SQLite file, or postgres://user:password@host/db for several replicas; default insights.db in the index directory (RAGPROXY_INSIGHTS_DB)")
	fs.DurationVar(&c.Insights.Retention, "insights-retention", envDuration("RAGPROXY_INSIGHTS_RETENTION", insights.DefaultRetention), "how long questions and feedback are kept; the database deletes older ones (RAGPROXY_INSIGHTS_RETENTION)")
	fs.StringVar(&f.embedOrigins, "embed-origins", envOr("RAGPROXY_EMBED_ORIGINS", ""), "comma-separated origins of the sites whose pages may carry the chat widget (/widget.js), e.g. https://www.example.edu; empty turns the widget off (RAGPROXY_EMBED_ORIGINS)")
	fs.StringVar(&f.widgetKeys, "widget-keys", envOr("RAGPROXY_WIDGET_KEYS", ""), "comma-separated publishable keys for the widget (public: chat only, from the embed origins, rate-limited per visitor); needed with --api-keys (RAGPROXY_WIDGET_KEYS)")
	fs.IntVar(&s.Embed.RequestsPerMinute, "widget-rpm", envInt("RAGPROXY_WIDGET_RPM", server.DefaultWidgetRequestsPerMinute), "chat requests per minute of one visitor (client address) with a widget key (RAGPROXY_WIDGET_RPM)")
	if own != nil {
		own(fs)
	}
	if err := fs.Parse(args); err != nil {
		return f, err
	}
	if fs.NArg() > 0 {
		return f, fmt.Errorf("%s: unexpected arguments %q", name, fs.Args())
	}
	// Keys come from the environment only, so they stay out of ps listings.
	f.up.key = os.Getenv("OPENAI_API_KEY")
	u.Fallback.APIKey = os.Getenv("RAGPROXY_FALLBACK_API_KEY")
	f.adminKeys = os.Getenv("RAGPROXY_ADMIN_KEYS")
	f.backends.readSecrets()
	return f, f.resolve()
}

// resolve checks what the flags say together and completes cfg from them.
func (f *serveFlags) resolve() error {
	c := &f.cfg
	u := &c.Upstream
	u.Primary = upstream.Endpoint{Name: "primary", BaseURL: f.up.url, APIKey: f.up.key, Model: f.up.model}
	u.Fallback.Name = "fallback"
	if err := f.resolveAssistants(); err != nil {
		return err
	}
	var err error
	if c.Insights.Mode, err = insights.ParseMode(f.questionLog); err != nil {
		return fmt.Errorf("serve: --question-log: %w", err)
	}
	if c.Insights.Retention <= 0 {
		return fmt.Errorf("serve: --insights-retention %v: want a positive duration", c.Insights.Retention)
	}
	if c.Grounding.SiteFAQ, err = grounding.ParseSiteFAQUse(c.Grounding.FAQSite); err != nil {
		return fmt.Errorf("serve: --faq-site %w", err)
	}
	if err := c.LogLevel.UnmarshalText([]byte(f.logLevel)); err != nil {
		return fmt.Errorf("serve: --log-level: %w", err)
	}
	s := &c.Server
	s.CORSOrigins = splitList(f.corsOrigins)
	for _, o := range s.CORSOrigins {
		if err := server.CheckOrigin(o); err != nil {
			return fmt.Errorf("serve: --cors-origins: %w", err)
		}
	}
	// A list that was set but names no key (", ,", a stray comma from templating) would turn client auth off, or
	// leave the admin API unreachable, without a word: it stops start-up instead.
	for _, l := range []struct{ name, value string }{{"--api-keys (RAGPROXY_API_KEYS)", f.apiKeys}, {"RAGPROXY_ADMIN_KEYS", f.adminKeys}} {
		if strings.TrimSpace(l.value) != "" && len(splitList(l.value)) == 0 {
			return fmt.Errorf("serve: %s is set to %q, which names no key: give the keys, or leave it unset to run without them", l.name, l.value)
		}
	}
	s.APIKeys, s.AdminKeys = splitList(f.apiKeys), splitList(f.adminKeys)
	for _, k := range s.AdminKeys {
		if slices.Contains(s.APIKeys, k) {
			return errors.New("serve: RAGPROXY_ADMIN_KEYS: an admin key is also a client key; give the admin API keys of its own")
		}
	}
	// The widget's keys are public: chat only, from the embed origins.
	origins, widgetKeys := splitList(f.embedOrigins), splitList(f.widgetKeys)
	for _, o := range origins {
		if err := server.CheckEmbedOrigin(o); err != nil {
			return fmt.Errorf("serve: --embed-origins: %w", err)
		}
	}
	for _, k := range widgetKeys {
		if slices.Contains(s.APIKeys, k) || slices.Contains(s.AdminKeys, k) {
			return errors.New("serve: --widget-keys: a widget key is public; it must not also be a client or an admin key")
		}
	}
	if len(origins) > 0 && len(s.APIKeys) > 0 && len(widgetKeys) == 0 {
		return errors.New("serve: --embed-origins with --api-keys needs --widget-keys: the widget cannot hold a client key")
	}
	s.Embed.Origins, s.Embed.Keys = server.EmbedOrigins(origins), widgetKeys
	// Traces go to the collector the standard OTLP variables name, unless OTEL_TRACES_EXPORTER is "none".
	c.TracesEndpoint = cmp.Or(os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"), os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT"))
	if os.Getenv("OTEL_TRACES_EXPORTER") == "none" {
		c.TracesEndpoint = ""
	}
	// The runtime reads GOGC itself; serve's own default applies only when the operator set none.
	if _, set := os.LookupEnv("GOGC"); !set {
		c.GCPercent = serve.DefaultGCPercent
	}
	c.Offline = f.offline()
	c.Version = version
	c.Retrieval.EmbedTimeout = f.embedTimeout
	c.Backends = f.backends.Config
	c.Assistants = f.assistants.list
	c.Grounding.LinkHosts = splitList(f.linkHosts)
	c.Admin.Jobs.Options = splitList(f.adminIngestOptions)
	c.Admin.ParseIngest, c.Admin.Edit = ingestJob, f.editConfig
	if c.Offline {
		return nil
	}
	// A question's embeddings are one short request: not retried, and given up at --embed-timeout, when retrieval
	// answers from the lexical lists (a key out of quota, a 429 whose Retry-After is minutes away, a 5xx).
	ec := f.up.embedConfig()
	ec.MaxRetries, ec.Timeout = -1, f.embedTimeout
	if c.Embedder, err = embedding.Choose(f.up.embedder, ec); err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	return nil
}

// editConfig is the ingest configuration of an admin edit: serve's upstream for summaries and embeddings, and
// the versions to keep.
func (f serveFlags) editConfig() (ingest.Config, error) {
	cfg := ingest.Config{Version: version, KeepVersions: f.keepVersions}
	var err error
	if cfg.Embedder, err = f.up.openaiEmbedder(); err != nil {
		return cfg, err
	}
	if f.up.online() {
		ask, err := f.up.ask()
		if err != nil {
			return cfg, err
		}
		cfg.Summarizer = &summary.LLM{Ask: ask, Model: f.up.model}
	}
	return cfg, nil
}

func splitList(s string) []string {
	var out []string
	for _, k := range strings.Split(s, ",") {
		if k = strings.TrimSpace(k); k != "" {
			out = append(out, k)
		}
	}
	return out
}

// offline reports that no upstream model is configured: no key, and the default OpenAI endpoint (a local
// OpenAI-compatible server such as Ollama needs no key, so a changed URL counts as configured).
func (f serveFlags) offline() bool {
	return f.up.key == "" && f.up.url == defaultUpstreamURL && f.cfg.Upstream.Fallback.BaseURL == ""
}

const defaultUpstreamURL = "https://api.openai.com/v1"
