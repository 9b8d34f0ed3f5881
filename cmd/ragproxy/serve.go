package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/ragproxy/ragproxy/cache"
	"github.com/ragproxy/ragproxy/embedding"
	"github.com/ragproxy/ragproxy/grounding"
	"github.com/ragproxy/ragproxy/index"
	"github.com/ragproxy/ragproxy/observability"
	"github.com/ragproxy/ragproxy/ratelimit"
	"github.com/ragproxy/ragproxy/retrieval"
	"github.com/ragproxy/ragproxy/retrieval/faq"
	"github.com/ragproxy/ragproxy/retrieval/qdrant"
	"github.com/ragproxy/ragproxy/server"
	"github.com/ragproxy/ragproxy/tokenizer"
	"github.com/ragproxy/ragproxy/upstream"
	"github.com/ragproxy/ragproxy/webui"
)

// serveFlags are serve's settings: each flag falls back to an environment
// variable, then to a default.
type serveFlags struct {
	listen, apiKeys, adminKeys, corsOrigins, linkHosts             string
	fallbackURL, fallbackModel, fallbackKey                        string
	analysisModel                                                  string
	upstreamTimeout, heartbeat, drain, retryBackoff, maxRetryAfter time.Duration
	streamIdle, analysisTimeout, readTimeout, reloadInterval       time.Duration
	maxConns, maxConnsPerIP, rpm, tpm                              int
	maxBody, keepVersions                                          int
	listUpstream                                                   bool
	logLevel                                                       string
	index, name, site, faqFile, faqSite                            string
	faqDirect, faqEvidence                                         float64
	siteFAQ                                                        grounding.SiteFAQUse
	sourceEvents                                                   bool
	redisURL                                                       string
	cacheTTL                                                       time.Duration
	noCache                                                        bool
	up                                                             upstreamFlags
	retrieval                                                      retrievalFlags
	backends                                                       backendFlags
	assistants                                                     assistantFlags
}

func envDuration(name string, def time.Duration) time.Duration {
	if v, ok := os.LookupEnv(name); ok {
		if d, err := time.ParseDuration(v); err == nil {
			return d
		}
	}
	return def
}

func envInt(name string, def int) int {
	if v, ok := os.LookupEnv(name); ok {
		if n, err := strconv.Atoi(v); err == nil {
			return n
		}
	}
	return def
}

func envBool(name string, def bool) bool {
	if v, ok := os.LookupEnv(name); ok {
		if b, err := strconv.ParseBool(v); err == nil {
			return b
		}
	}
	return def
}

func parseServeFlags(args []string) (serveFlags, error) {
	var f serveFlags
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.StringVar(&f.listen, "listen", envOr("RAGPROXY_LISTEN", "127.0.0.1:8080"), "address to listen on (RAGPROXY_LISTEN)")
	fs.StringVar(&f.apiKeys, "api-keys", envOr("RAGPROXY_API_KEYS", ""), "comma-separated client API keys; empty disables client auth (RAGPROXY_API_KEYS)")
	fs.StringVar(&f.corsOrigins, "cors-origins", envOr("RAGPROXY_CORS_ORIGINS", ""), "comma-separated browser origins allowed to call the API, e.g. http://localhost:3000 for Open WebUI's Direct Connections, or *; empty allows none (RAGPROXY_CORS_ORIGINS)")
	fs.StringVar(&f.linkHosts, "link-hosts", envOr("RAGPROXY_LINK_HOSTS", ""), "comma-separated hosts besides the site's own that answers may link to, when the context holds the link (RAGPROXY_LINK_HOSTS)")
	fs.StringVar(&f.fallbackURL, "fallback-upstream-url", envOr("RAGPROXY_FALLBACK_URL", ""), "fallback upstream base URL, e.g. http://127.0.0.1:11434/v1 (RAGPROXY_FALLBACK_URL)")
	fs.StringVar(&f.analysisModel, "analysis-model", envOr("RAGPROXY_ANALYSIS_MODEL", ""), "chat model for query analysis; default --model, which answers (RAGPROXY_ANALYSIS_MODEL)")
	fs.StringVar(&f.fallbackModel, "fallback-model", envOr("RAGPROXY_FALLBACK_MODEL", ""), "model asked of the fallback upstream (RAGPROXY_FALLBACK_MODEL)")
	fs.DurationVar(&f.upstreamTimeout, "upstream-timeout", envDuration("RAGPROXY_UPSTREAM_TIMEOUT", 2*time.Minute), "per-attempt time to the upstream's first byte (RAGPROXY_UPSTREAM_TIMEOUT)")
	fs.DurationVar(&f.streamIdle, "stream-idle-timeout", envDuration("RAGPROXY_STREAM_IDLE_TIMEOUT", time.Minute), "longest silence between an upstream stream's chunks before it ends with a 504 error (RAGPROXY_STREAM_IDLE_TIMEOUT)")
	fs.DurationVar(&f.analysisTimeout, "analysis-timeout", envDuration("RAGPROXY_ANALYSIS_TIMEOUT", retrieval.DefaultAnalysisTimeout), "longest query analysis, retries included, before the heuristic analysis is used instead (RAGPROXY_ANALYSIS_TIMEOUT)")
	fs.DurationVar(&f.maxRetryAfter, "max-retry-after", envDuration("RAGPROXY_MAX_RETRY_AFTER", 5*time.Second), "longest Retry-After a retry waits for; longer goes to the fallback (RAGPROXY_MAX_RETRY_AFTER)")
	fs.DurationVar(&f.retryBackoff, "retry-backoff", envDuration("RAGPROXY_RETRY_BACKOFF", 200*time.Millisecond), "pause before retrying a failed upstream attempt (RAGPROXY_RETRY_BACKOFF)")
	fs.DurationVar(&f.heartbeat, "heartbeat", envDuration("RAGPROXY_HEARTBEAT", 10*time.Second), "interval of ': ping' comments on waiting streams (RAGPROXY_HEARTBEAT)")
	fs.DurationVar(&f.drain, "drain-timeout", envDuration("RAGPROXY_DRAIN_TIMEOUT", 30*time.Second), "how long SIGTERM waits for in-flight streams (RAGPROXY_DRAIN_TIMEOUT)")
	fs.DurationVar(&f.readTimeout, "read-timeout", envDuration("RAGPROXY_READ_TIMEOUT", time.Minute), "longest a client may take to send a request, headers and body (RAGPROXY_READ_TIMEOUT)")
	fs.DurationVar(&f.reloadInterval, "reload-interval", envDuration("RAGPROXY_RELOAD_INTERVAL", 5*time.Second), "how often to check the index directory's CURRENT and switch to a new version; 0 checks only on SIGHUP and POST /admin/index/reload (RAGPROXY_RELOAD_INTERVAL)")
	fs.IntVar(&f.maxConns, "max-conns", envInt("RAGPROXY_MAX_CONNS", 0), "connections held open at once; 0: three quarters of the file-descriptor limit (RAGPROXY_MAX_CONNS)")
	fs.IntVar(&f.maxConnsPerIP, "max-conns-per-ip", envInt("RAGPROXY_MAX_CONNS_PER_IP", 0), "connections from one client address; 0: a quarter of --max-conns (behind a reverse proxy, set it to --max-conns) (RAGPROXY_MAX_CONNS_PER_IP)")
	fs.IntVar(&f.rpm, "rate-limit-rpm", envInt("RAGPROXY_RATE_LIMIT_RPM", 0), "chat requests per minute per client key (per address without client auth); 0: no limit (RAGPROXY_RATE_LIMIT_RPM)")
	fs.IntVar(&f.tpm, "rate-limit-tpm", envInt("RAGPROXY_RATE_LIMIT_TPM", 0), "tokens per minute per client key, prompt and answer; 0: no limit (RAGPROXY_RATE_LIMIT_TPM)")
	fs.IntVar(&f.keepVersions, "keep-versions", envInt("RAGPROXY_KEEP_VERSIONS", index.DefaultKeepVersions), "index versions kept on disk when the admin API writes one (RAGPROXY_KEEP_VERSIONS)")
	fs.IntVar(&f.maxBody, "max-body-bytes", envInt("RAGPROXY_MAX_BODY_BYTES", 8<<20), "largest accepted request body (RAGPROXY_MAX_BODY_BYTES)")
	fs.BoolVar(&f.listUpstream, "list-upstream-models", envBool("RAGPROXY_LIST_UPSTREAM_MODELS", false), "add the upstream's models to /v1/models (RAGPROXY_LIST_UPSTREAM_MODELS)")
	fs.StringVar(&f.logLevel, "log-level", envOr("RAGPROXY_LOG_LEVEL", "info"), "debug, info, warn or error (RAGPROXY_LOG_LEVEL)")
	fs.StringVar(&f.index, "index", envOr("RAGPROXY_INDEX", ""), "index directory to answer from; empty serves a plain pass-through gateway (RAGPROXY_INDEX)")
	fs.StringVar(&f.site, "site-name", envOr("RAGPROXY_SITE_NAME", ""), "the site's name in the grounding prompt and on the chat page; default the assistant's model id (RAGPROXY_SITE_NAME)")
	fs.StringVar(&f.name, "name", envOr("RAGPROXY_NAME", ""), "model id of the assistant in /v1/models; default the index directory's name (RAGPROXY_NAME)")
	fs.StringVar(&f.faqFile, "faq", envOr("RAGPROXY_FAQ", ""), "FAQ file (JSONL, JSON or YAML: question, answer, url, optional title and alternatives) whose close matches are answered directly (RAGPROXY_FAQ)")
	fs.Float64Var(&f.faqDirect, "faq-threshold", faq.DefaultDirectThreshold, "FAQ match score from which the FAQ's answer is given directly, without a model (calibrate with ragproxy eval --faq)")
	fs.StringVar(&f.faqSite, "faq-site", envOr("RAGPROXY_FAQ_SITE", "evidence"), "what the FAQ entries found in the site's own markup may do: evidence (lead the context), direct (answer close matches like --faq) or off (RAGPROXY_FAQ_SITE)")
	fs.Float64Var(&f.faqEvidence, "faq-evidence-threshold", faq.DefaultEvidenceThreshold, "FAQ match score from which the entry leads the context")
	fs.BoolVar(&f.sourceEvents, "source-events", envBool("RAGPROXY_SOURCE_EVENTS", false), "send Open WebUI source events on every stream, not only to Open WebUI (RAGPROXY_SOURCE_EVENTS)")
	fs.StringVar(&f.redisURL, "redis-url", envOr("REDIS_URL", ""), "Redis for the response cache, redis://[user:password@]host:port/db; empty keeps it in process (REDIS_URL)")
	fs.DurationVar(&f.cacheTTL, "cache-ttl", envDuration("RAGPROXY_CACHE_TTL", time.Hour), "how long cached answers are served (RAGPROXY_CACHE_TTL)")
	fs.BoolVar(&f.noCache, "no-cache", envBool("RAGPROXY_NO_CACHE", false), "disable the response cache (RAGPROXY_NO_CACHE)")
	f.up.register(fs)
	f.retrieval.register(fs)
	f.backends.register(fs)
	f.assistants.register(fs)
	if err := fs.Parse(args); err != nil {
		return f, err
	}
	if err := f.resolveAssistants(); err != nil {
		return f, err
	}
	if fs.NArg() > 0 {
		return f, fmt.Errorf("serve: unexpected arguments %q", fs.Args())
	}
	var err error
	if f.siteFAQ, err = siteFAQUse(f.faqSite); err != nil {
		return f, err
	}
	for _, o := range splitList(f.corsOrigins) {
		if err := server.CheckOrigin(o); err != nil {
			return f, fmt.Errorf("serve: --cors-origins: %w", err)
		}
	}
	// Keys come from the environment only, so they stay out of ps listings.
	f.up.key = os.Getenv("OPENAI_API_KEY")
	f.fallbackKey = os.Getenv("RAGPROXY_FALLBACK_API_KEY")
	f.adminKeys = os.Getenv("RAGPROXY_ADMIN_KEYS")
	for _, k := range splitList(f.adminKeys) {
		for _, c := range splitList(f.apiKeys) {
			if k == c {
				return f, errors.New("serve: RAGPROXY_ADMIN_KEYS: an admin key is also a client key; give the admin API keys of its own")
			}
		}
	}
	f.backends.readSecrets()
	return f, nil
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

func runServe(ctx context.Context, args []string) error {
	f, err := parseServeFlags(args)
	if err != nil {
		return err
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(f.logLevel)); err != nil {
		return fmt.Errorf("serve: --log-level: %w", err)
	}
	logger := observability.NewLogger(os.Stderr, observability.LogConfig{Level: level})
	metrics, err := observability.New(observability.Config{
		Models:    append([]string{"ragproxy", f.assistantName(), f.up.model, f.fallbackModel}, f.assistants.names()...),
		Upstreams: []string{"primary", "fallback"},
	})
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	obs := &server.MetricsObserver{Metrics: metrics, Logger: logger}

	ccfg := upstream.Config{
		Primary:           upstream.Endpoint{Name: "primary", BaseURL: f.up.url, APIKey: f.up.key, Model: f.up.model},
		Fallback:          upstream.Endpoint{Name: "fallback", BaseURL: f.fallbackURL, APIKey: f.fallbackKey, Model: f.fallbackModel},
		Backoff:           f.retryBackoff,
		MaxRetryAfter:     f.maxRetryAfter,
		FirstByteTimeout:  f.upstreamTimeout,
		StreamIdleTimeout: f.streamIdle,
	}
	client, err := upstream.New(ccfg)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	scfg := server.Config{
		Listen:             f.listen,
		APIKeys:            splitList(f.apiKeys),
		AdminKeys:          splitList(f.adminKeys),
		CORSOrigins:        splitList(f.corsOrigins),
		MaxBodyBytes:       f.maxBody,
		ReadTimeout:        f.readTimeout,
		MaxConns:           f.maxConns,
		MaxConnsPerIP:      f.maxConnsPerIP,
		Heartbeat:          f.heartbeat,
		DrainTimeout:       f.drain,
		ListUpstreamModels: f.listUpstream,
		Logger:             logger,
		Metrics:            metrics.Handler(),
		Observer:           obs,
	}
	backend, closeCache, err := f.openCache(ctx, logger)
	if err != nil {
		return err
	}
	defer closeCache()
	tolerant := func(name string) cache.Cache {
		if backend == nil {
			return nil
		}
		return &cache.Tolerant{Cache: backend, Logger: logger, OnError: func(string, error) { metrics.Cache(name, "error") }}
	}
	scfg.Cache, scfg.CacheTTL = tolerant("response"), f.cacheTTL
	scfg.RateLimits = server.RateLimits{RequestsPerMinute: f.rpm, TokensPerMinute: f.tpm}
	if r, ok := backend.(*cache.Redis); ok {
		// Replicas share one count through the cache's Redis.
		scfg.RateLimits.Store = ratelimit.NewRedis(r.Scripter(), r.Prefix())
	}
	if f.index != "" {
		rl, err := f.ground(ctx, &scfg, client, logger, obs, tolerant("analysis"))
		if err != nil {
			return err
		}
		defer rl.live.Close()
		wctx, stop := context.WithCancel(ctx)
		defer stop()
		adm := newAdmin(wctx, f, rl, logger)
		defer adm.close()
		scfg.Admin = append(scfg.Admin, append(rl.routes(), adm.routes()...)...)
		rl.onSignal(wctx)
		if f.reloadInterval > 0 {
			go rl.watch(wctx, f.reloadInterval)
		}
	}
	page, err := webui.New(webui.Config{Site: f.siteName(), Model: f.pageModel(scfg), AuthRequired: len(scfg.APIKeys) > 0})
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	scfg.Page = page
	logger.Info("serving", "listen", f.listen, "page", "http://"+f.listen+"/", "upstream", ccfg.Redacted().Primary, "fallback", ccfg.Redacted().Fallback,
		"client_auth", len(scfg.APIKeys) > 0, "admin_api", len(scfg.AdminKeys) > 0, "index", f.index, "cache", f.cacheName(), "cache_ttl", f.cacheTTL, "backends", f.backends.names())
	return server.New(scfg, client).Run(ctx)
}

// offline reports that no upstream model is configured: no key, and the default OpenAI endpoint (a local
// OpenAI-compatible server such as Ollama needs no key, so a changed URL counts as configured).
func (f serveFlags) offline() bool {
	return f.up.key == "" && f.up.url == defaultUpstreamURL && f.fallbackURL == ""
}

const defaultUpstreamURL = "https://api.openai.com/v1"

// siteName names the site in the grounding prompt and on the chat page: --site-name, else the assistant's model
// id when there is an index, and "" for a plain gateway.
func (f serveFlags) siteName() string {
	switch {
	case f.index == "":
		return ""
	case f.site != "":
		return f.site
	}
	return f.assistantName()
}

// pageModel is the model the chat page asks by default: the first model served.
func (f serveFlags) pageModel(scfg server.Config) string {
	if len(scfg.Models) > 0 {
		return scfg.Models[0].ID
	}
	return "ragproxy"
}

// assistantName is the model id of the grounded assistant: --name, else the
// index directory's name, else "ragproxy".
func (f serveFlags) assistantName() string {
	switch {
	case f.name != "":
		return f.name
	case f.index != "":
		return filepath.Base(filepath.Clean(f.index))
	}
	return "ragproxy"
}

func (f serveFlags) cacheName() string {
	switch {
	case f.noCache:
		return "off"
	case f.redisURL != "":
		return "redis " + cache.RedisConfig{URL: f.redisURL}.Redacted()
	}
	return "in-process"
}

// openCache opens the cache backend: Redis when --redis-url is set, else an
// in-process LRU; nil with --no-cache. A Redis that is down at start or
// later only costs misses, so it is reported and not fatal. The returned
// func releases the backend.
func (f serveFlags) openCache(ctx context.Context, logger *slog.Logger) (cache.Cache, func(), error) {
	if f.noCache {
		return nil, func() {}, nil
	}
	if f.redisURL == "" {
		lru, err := cache.NewLRU(cache.LRUConfig{})
		if err != nil {
			return nil, nil, fmt.Errorf("serve: %w", err)
		}
		return lru, func() {}, nil
	}
	r, err := cache.NewRedis(cache.RedisConfig{URL: f.redisURL})
	if err != nil {
		return nil, nil, fmt.Errorf("serve: --redis-url: %w", err)
	}
	if err := r.Ping(ctx); err != nil {
		logger.Warn("redis does not answer; requests are served uncached until it does", "redis", f.cacheName(), "err", err)
	}
	return r, func() { _ = r.Close() }, nil
}

// ground loads the index and makes the server answer from it, and returns the reloader that switches to newer
// versions.
func (f serveFlags) ground(ctx context.Context, scfg *server.Config, client *upstream.Client, logger *slog.Logger, obs *server.MetricsObserver, analysisCache cache.Cache) (*reloader, error) {
	tok, err := tokenizer.New()
	if err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	var remote embedding.Embedder
	if !f.offline() {
		if remote, err = f.up.openaiEmbedder(); err != nil {
			return nil, fmt.Errorf("serve: %w", err)
		}
	}
	open := func(ctx context.Context) (*retrieval.Retriever, func(), error) {
		return f.openVersion(ctx, remote, tok, logger, true)
	}
	r, release, err := f.openVersion(ctx, remote, tok, logger, false)
	if err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	name, site := f.assistantName(), f.siteName()
	rl := &reloader{dir: f.index, live: retrieval.NewLive(r, release), open: open, logger: logger, metrics: obs.Metrics,
		name: name, loadedAt: time.Now()}
	rl.seen, _ = index.Current(f.index)
	g := &grounding.Grounder{Retriever: rl.live, Tokenizer: tok, SiteName: site, Offline: f.offline(), LinkHosts: splitList(f.linkHosts),
		SourceEvents: f.sourceEvents, OnRetrieval: obs.ObserveRetrieval,
		FAQDirectThreshold: f.faqDirect, FAQEvidenceThreshold: f.faqEvidence, SiteFAQ: f.siteFAQ,
		OnFAQ: func(_ context.Context, kind string) { obs.Metrics.FAQAnswer(kind) }}
	if f.faqFile != "" {
		entries, err := faq.Load(f.faqFile)
		if err != nil {
			return nil, fmt.Errorf("serve: --faq: %w", err)
		}
		g.FAQ = faq.NewMatcher(entries)
		logger.Info("faq loaded", "file", f.faqFile, "entries", g.FAQ.Len(), "direct_threshold", f.faqDirect)
	}
	if !f.offline() {
		// Analysis goes through the same client as the answers (timeouts, retries, failover) under its own
		// short deadline.
		analysisModel := cmp.Or(f.analysisModel, f.up.model)
		ask := upstream.Asker{Client: client, Model: analysisModel}.Ask
		g.Analyzer = &retrieval.LLMAnalyzer{Ask: ask, SiteName: site, Timeout: f.analysisTimeout,
			OnFallback: func(err error) { logger.Warn("query analysis fell back to heuristics", "err", err) }}
		if analysisCache != nil {
			ca := grounding.NewCachedAnalyzer(g.Analyzer, analysisCache, analysisModel+"\x00"+name, f.cacheTTL)
			ca.OnLookup = func(result string) { obs.Metrics.Cache("analysis", result) }
			g.Analyzer = ca
		}
	}
	scfg.Grounder = g
	scfg.Models = []server.ModelAlias{{ID: name, Upstream: f.up.model}}
	m := r.Index().Manifest
	obs.Metrics.SetIndexInfo(name, m.Version, m.Embedder, m.Pages, m.Chunks)
	// Everything besides the request that shapes an answer goes into the response cache key: the Grounder gives
	// the index version (it changes with a re-ingest), the prompt version changes with the prompt or the binary.
	settings, err := json.Marshal(struct {
		Retrieval retrieval.Config
		Offline   bool
		Sources   int
		Backends  string
		LinkHosts []string
		FAQ       string
		SiteFAQ   string
	}{r.Config(), g.Offline, g.MaxSources, f.backends.names(), g.LinkHosts, f.faqDigest(), f.faqSite})
	if err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	scfg.RetrievalSettings = string(settings)
	f.assistants.wire(g, scfg, name, f.up.model)
	scfg.PromptVersion = cache.Key(grounding.GroundingPrompt, site, version)[:16]
	// Loading decodes the index through a lot of short-lived memory (its JSON files above all): give it back now
	// instead of holding it as the heap's headroom for as long as the server runs.
	debug.FreeOSMemory()
	logger.Info("index loaded", "index", f.index, "version", m.Version, "pages", m.Pages, "chunks", m.Chunks,
		"embedder", m.Embedder, "offline", g.Offline, "reload_interval", f.reloadInterval)
	return rl, nil
}

// faqDigest identifies the FAQ's content and thresholds for the response cache key: editing the file changes it.
func (f serveFlags) faqDigest() string {
	b, _ := os.ReadFile(f.faqFile) // nothing when unset
	return cache.Key(string(b), fmt.Sprint(f.faqDirect, f.faqEvidence))[:16]
}

// siteFAQUse reads --faq-site.
func siteFAQUse(s string) (grounding.SiteFAQUse, error) {
	switch s {
	case "evidence":
		return grounding.SiteFAQEvidence, nil
	case "direct":
		return grounding.SiteFAQDirect, nil
	case "off":
		return grounding.SiteFAQOff, nil
	}
	return 0, fmt.Errorf("serve: --faq-site %q: want evidence, direct or off", s)
}

// openVersion loads the index version that CURRENT names, with backends bound to it. The returned func closes
// the backends. A reload (while another version serves) loads on one core, leaving the others to the requests
// in flight, and fails on a version whose Qdrant collections are missing or hold other pages: ingest replaces
// CURRENT before it syncs the backends, so a server that noticed early keeps its version until the sync is done
// (the reloader tries again).
func (f serveFlags) openVersion(ctx context.Context, remote embedding.Embedder, tok *tokenizer.Tokenizer, logger *slog.Logger, reload bool) (*retrieval.Retriever, func(), error) {
	open := retrieval.Open
	if reload {
		open = retrieval.OpenGently
	}
	r, err := open(f.index, remote, tok, f.retrieval.config())
	if err != nil {
		return nil, nil, err
	}
	ix := r.Index()
	if err := f.assistants.check(ix); err != nil {
		ix.Close()
		return nil, nil, err
	}
	bk, closeBackends, err := f.backends.open(ctx, f.index, ix, logger)
	if err != nil {
		ix.Close()
		return nil, nil, err
	}
	release := func() {
		closeBackends()
		ix.Close()
	}
	if err := f.backends.verify(bk, ix, logger); err != nil && reload &&
		(errors.Is(err, qdrant.ErrVersionMissing) || errors.Is(err, errQdrantDrift)) {
		release()
		return nil, nil, err
	}
	f.assistants.checkQdrant(bk, ix, logger)
	return r.WithBackends(bk), release, nil
}
