package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/ragproxy/ragproxy/admin"
	"github.com/ragproxy/ragproxy/cache"
	"github.com/ragproxy/ragproxy/grounding"
	"github.com/ragproxy/ragproxy/index"
	"github.com/ragproxy/ragproxy/retrieval"
	"github.com/ragproxy/ragproxy/retrieval/faq"
	"github.com/ragproxy/ragproxy/server"
)

// serveFlags are serve's settings: each flag falls back to an environment
// variable, then to a default.
type serveFlags struct {
	listen, apiKeys, adminKeys, corsOrigins, linkHosts             string
	fallbackURL, fallbackModel, fallbackKey                        string
	analysisModel                                                  string
	upstreamTimeout, heartbeat, drain, retryBackoff, maxRetryAfter time.Duration
	streamIdle, analysisTimeout, readTimeout, reloadInterval       time.Duration
	analysisBudget                                                 time.Duration
	embedTimeout                                                   time.Duration
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
	adminIngestOptions, adminMirrorRoot, metricsListen             string
	allowPrivateIngest                                             bool
	up                                                             upstreamFlags
	retrieval                                                      retrievalFlags
	backends                                                       backendFlags
	assistants                                                     assistantFlags
	embed                                                          embedFlags
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
	fs.StringVar(&f.apiKeys, "api-keys", envOr("RAGPROXY_API_KEYS", ""), "comma-separated client API keys; unset or empty disables client auth, a list of no keys (\",\") refuses to start (RAGPROXY_API_KEYS)")
	fs.StringVar(&f.corsOrigins, "cors-origins", envOr("RAGPROXY_CORS_ORIGINS", ""), "comma-separated browser origins allowed to call the API, e.g. http://localhost:3000 for Open WebUI's Direct Connections, or *; empty allows none (RAGPROXY_CORS_ORIGINS)")
	fs.StringVar(&f.linkHosts, "link-hosts", envOr("RAGPROXY_LINK_HOSTS", ""), "comma-separated hosts besides the site's own that answers may link to, when the context holds the link (RAGPROXY_LINK_HOSTS)")
	fs.StringVar(&f.fallbackURL, "fallback-upstream-url", envOr("RAGPROXY_FALLBACK_URL", ""), "fallback upstream base URL, e.g. http://127.0.0.1:11434/v1 (RAGPROXY_FALLBACK_URL)")
	fs.StringVar(&f.analysisModel, "analysis-model", envOr("RAGPROXY_ANALYSIS_MODEL", ""), "chat model for query analysis; default --model, which answers (RAGPROXY_ANALYSIS_MODEL)")
	fs.StringVar(&f.fallbackModel, "fallback-model", envOr("RAGPROXY_FALLBACK_MODEL", ""), "model asked of the fallback upstream (RAGPROXY_FALLBACK_MODEL)")
	fs.DurationVar(&f.upstreamTimeout, "upstream-timeout", envDuration("RAGPROXY_UPSTREAM_TIMEOUT", 2*time.Minute), "per-attempt time to the upstream's first byte (RAGPROXY_UPSTREAM_TIMEOUT)")
	fs.DurationVar(&f.streamIdle, "stream-idle-timeout", envDuration("RAGPROXY_STREAM_IDLE_TIMEOUT", time.Minute), "longest silence between an upstream stream's chunks before it ends with a 504 error (RAGPROXY_STREAM_IDLE_TIMEOUT)")
	fs.DurationVar(&f.analysisTimeout, "analysis-timeout", envDuration("RAGPROXY_ANALYSIS_TIMEOUT", retrieval.DefaultAnalysisTimeout), "longest query analysis, retries included, before the heuristic analysis is used instead (RAGPROXY_ANALYSIS_TIMEOUT)")
	fs.DurationVar(&f.analysisBudget, "analysis-budget", envDuration("RAGPROXY_ANALYSIS_BUDGET", grounding.DefaultAnalysisBudget), "longest a follow-up waits for the model's query analysis before retrieving on the heuristic one; the analysis goes on for the cache (RAGPROXY_ANALYSIS_BUDGET)")
	fs.DurationVar(&f.embedTimeout, "embed-timeout", envDuration("RAGPROXY_EMBED_TIMEOUT", time.Second), "longest wait for a question's embeddings, without retries, before it is answered from the lexical lists alone (RAGPROXY_EMBED_TIMEOUT)")
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
	fs.StringVar(&f.adminIngestOptions, "admin-ingest-options", envOr("RAGPROXY_ADMIN_INGEST_OPTIONS", strings.Join(admin.DefaultJobOptions(), ",")), "comma-separated ingest options an admin ingest job may set; the default describes the site only, and adding upstream, model, backend or summary options lets admin keys spend or send the server's own keys (RAGPROXY_ADMIN_INGEST_OPTIONS)")
	fs.BoolVar(&f.allowPrivateIngest, "allow-private-ingest", envBool("RAGPROXY_ALLOW_PRIVATE_INGEST", false), "let admin ingest jobs set allow-private and crawl private and loopback addresses (RAGPROXY_ALLOW_PRIVATE_INGEST)")
	fs.StringVar(&f.adminMirrorRoot, "admin-mirror-root", envOr("RAGPROXY_ADMIN_MIRROR_ROOT", ""), "directory under which an admin ingest job's source may be a directory of saved pages; empty: jobs crawl URLs only (RAGPROXY_ADMIN_MIRROR_ROOT)")
	fs.StringVar(&f.metricsListen, "metrics-listen", envOr("RAGPROXY_METRICS_LISTEN", ""), "address serving /metrics apart from the API, e.g. 127.0.0.1:9090, which takes /metrics off --listen; empty serves it on --listen (RAGPROXY_METRICS_LISTEN)")
	f.up.register(fs)
	f.retrieval.register(fs)
	f.backends.register(fs)
	f.assistants.register(fs)
	f.embed.register(fs)
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
	if f.siteFAQ, err = grounding.ParseSiteFAQUse(f.faqSite); err != nil {
		return f, fmt.Errorf("serve: --faq-site %w", err)
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
	// A list that was set but names no key (", ,", a stray comma from templating) would turn client auth off, or
	// leave the admin API unreachable, without a word: it stops start-up instead.
	for _, l := range []struct{ name, value string }{{"--api-keys (RAGPROXY_API_KEYS)", f.apiKeys}, {"RAGPROXY_ADMIN_KEYS", f.adminKeys}} {
		if strings.TrimSpace(l.value) != "" && len(splitList(l.value)) == 0 {
			return f, fmt.Errorf("serve: %s is set to %q, which names no key: give the keys, or leave it unset to run without them", l.name, l.value)
		}
	}
	for _, k := range splitList(f.adminKeys) {
		for _, c := range splitList(f.apiKeys) {
			if k == c {
				return f, errors.New("serve: RAGPROXY_ADMIN_KEYS: an admin key is also a client key; give the admin API keys of its own")
			}
		}
	}
	if err := f.embed.check(splitList(f.apiKeys), splitList(f.adminKeys)); err != nil {
		return f, err
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

// jobPolicy is what admin ingest jobs may ask for.
func (f serveFlags) jobPolicy() admin.JobPolicy {
	return admin.JobPolicy{Options: splitList(f.adminIngestOptions), AllowPrivate: f.allowPrivateIngest, MirrorRoot: f.adminMirrorRoot}
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

func (f serveFlags) cacheName() string { return f.cacheBackend().Name() }

func (f serveFlags) cacheBackend() cache.BackendConfig {
	return cache.BackendConfig{Off: f.noCache, RedisURL: f.redisURL}
}
