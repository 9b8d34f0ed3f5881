// Package serve assembles what a `ragproxy serve` process runs from one Config: the upstream client, the caches
// and rate limits, the index with its grounder and admin API, the chat page, metrics, readiness and tracing,
// and runs the gateway until its context ends. The command line fills the Config; nothing here reads flags or
// the environment, except the tracing exporter, which reads the standard OTEL_EXPORTER_OTLP_* variables itself
// once TracesEndpoint turns it on.
//
// Run is called once per process; the Config it reads is not changed.
package serve

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/ragproxy/ragproxy/admin"
	"github.com/ragproxy/ragproxy/backends"
	"github.com/ragproxy/ragproxy/cache"
	"github.com/ragproxy/ragproxy/embedding"
	"github.com/ragproxy/ragproxy/grounding"
	"github.com/ragproxy/ragproxy/ingest"
	"github.com/ragproxy/ragproxy/observability"
	"github.com/ragproxy/ragproxy/ratelimit"
	"github.com/ragproxy/ragproxy/retrieval"
	"github.com/ragproxy/ragproxy/server"
	"github.com/ragproxy/ragproxy/upstream"
	"github.com/ragproxy/ragproxy/webui"
)

// Config is a serve process's settings. Its zero value serves a plain pass-through gateway on the server's
// defaults, in front of Upstream.
type Config struct {
	// Server is the gateway's own configuration: listen address, client and admin keys, CORS, the widget,
	// limits, timeouts, the response cache's TTL and the rate limits' quotas. Run adds what it builds (logger,
	// metrics, caches, readiness, grounder, models, admin routes, chat page, tracing).
	Server server.Config
	// Upstream is the client's configuration: primary and fallback endpoints, retries and stream bounds. Run
	// adds the traced HTTP client when tracing is on.
	Upstream upstream.Config
	// Offline answers every grounded request from the passages, without a model (no upstream is configured).
	Offline bool
	// GCPercent, when positive, is the garbage collector's target while serving (debug.SetGCPercent): the heap
	// may grow to live size times 1 + GCPercent/100 before a collection. 0 leaves the runtime's (GOGC, default
	// 100). See DefaultGCPercent.
	GCPercent int
	// LogLevel is the lowest level logged to standard error; default info.
	LogLevel slog.Level
	// MetricsListen, when set, serves /metrics on an address of its own and takes it off Server.Listen.
	MetricsListen string
	// TracesEndpoint, when set, exports a trace of every request over OTLP/HTTP to the collector it names (the
	// exporter reads the other standard OTEL_EXPORTER_OTLP_* variables); empty: tracing is off.
	TracesEndpoint string
	// Cache chooses the response and analysis caches' backend (in process, Redis, or off).
	Cache cache.BackendConfig

	// Index is the index directory to answer from; empty serves a plain pass-through gateway and leaves
	// everything below unused.
	Index string
	// Name is the model id of the assistant over the whole site; default the index directory's name.
	Name string
	// SiteName names the site in the grounding prompt and on the chat page; default Name.
	SiteName string
	// Version is the binary's version, part of the prompt version in the response cache key.
	Version string
	// Retrieval is retrieval's configuration, the bound on a question's embeddings included.
	Retrieval retrieval.Config
	// Backends are the scale-out stores (Qdrant, Neo4j) the index's versions are bound to; zero: none.
	Backends backends.Config
	// Assistants are the section assistants, already resolved (see grounding.ResolveAssistants).
	Assistants grounding.Definitions
	// Embedder embeds questions with the model the index was built with; nil uses the index's local embedder.
	Embedder embedding.Embedder
	// Grounding are the grounder's settings.
	Grounding Grounding
	// Admin are the admin API's settings.
	Admin Admin
	// Insights are the question log's settings.
	Insights Insights
}

// Grounding are the settings of the grounder behind the gateway.
type Grounding struct {
	// AnalysisModel is the model asked for query analysis; default the primary upstream's model. Unused offline.
	AnalysisModel string
	// AnalysisTimeout bounds one query analysis, retries included; AnalysisBudget is the longest a request waits
	// for it (see grounding.Grounder.AnalysisBudget).
	AnalysisTimeout, AnalysisBudget time.Duration
	// LinkHosts are hosts besides the site's own that answers may link to.
	LinkHosts []string
	// SourceEvents sends Open WebUI source events on every stream.
	SourceEvents bool
	// FAQFile is the operator's FAQ file; empty: none. FAQDirect and FAQEvidence are its thresholds.
	FAQFile                string
	FAQDirect, FAQEvidence float64
	// FAQSite is what the FAQ entries of the site's own markup may do, as given ("evidence", "direct", "off"),
	// and SiteFAQ the same parsed.
	FAQSite string
	SiteFAQ grounding.SiteFAQUse
}

// Admin are the admin API's settings.
type Admin struct {
	// ReloadInterval is how often CURRENT is checked for a new index version; 0 only on SIGHUP and request.
	ReloadInterval time.Duration
	// Jobs is what admin ingest jobs may ask for.
	Jobs admin.JobPolicy
	// ParseIngest parses an ingest job's command line as `ragproxy ingest` does.
	ParseIngest func(args []string, out io.Writer) (*admin.Ingest, error)
	// Edit is the ingest configuration of an operator's edit (summaries and embeddings as the index has them).
	Edit func() (ingest.Config, error)
}

// DefaultGCPercent is the garbage collector's target a serve process runs with unless the operator sets GOGC:
// retrieval's allocations are short-lived, so collecting at half again the live heap instead of twice it costs
// little CPU and keeps about 14 MB (a tenth) off the resident memory of a server of the Berkeley guide.
const DefaultGCPercent = 50

// AssistantName is the model id of the grounded assistant: Name, else the index directory's name, else
// "ragproxy".
func (c *Config) AssistantName() string {
	switch {
	case c.Name != "":
		return c.Name
	case c.Index != "":
		return filepath.Base(filepath.Clean(c.Index))
	}
	return "ragproxy"
}

// siteName names the site in the grounding prompt and on the chat page: SiteName, else the assistant's model id
// when there is an index, and "" for a plain gateway.
func (c *Config) siteName() string {
	switch {
	case c.Index == "":
		return ""
	case c.SiteName != "":
		return c.SiteName
	}
	return c.AssistantName()
}

// Run builds the gateway and runs it until ctx ends; a running ingest job is cancelled and waited for.
func Run(ctx context.Context, c Config) error {
	if c.GCPercent > 0 {
		debug.SetGCPercent(c.GCPercent)
	}
	logger := observability.NewLogger(os.Stderr, observability.LogConfig{Level: c.LogLevel})
	metrics, err := observability.New(observability.Config{
		Models:    append([]string{"ragproxy", c.AssistantName(), c.Upstream.Primary.Model, c.Upstream.Fallback.Model}, c.Assistants.Names()...),
		Upstreams: []string{"primary", "fallback"}, Tasks: server.Tasks(), Stages: retrieval.Stages(),
	})
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	obs := &server.MetricsObserver{Metrics: metrics, Logger: logger}
	tracing, stopTracing, err := openTracing(ctx, c.TracesEndpoint, logger)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	defer stopTracing()
	ccfg := c.Upstream
	ccfg.HTTPClient = tracedClient(tracing)
	client, err := upstream.New(ccfg)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	scfg := c.Server
	scfg.Logger, scfg.Metrics, scfg.Observer, scfg.Tracing = logger, metrics.Handler(), obs, tracing
	backend, closeCache, err := openCache(ctx, c.Cache, logger)
	if err != nil {
		return err
	}
	defer closeCache()
	ready, closeReady, err := Readiness(ctx, c, backend, metrics)
	if err != nil {
		return err
	}
	defer closeReady()
	scfg.Ready = ready
	tolerant := func(name string) cache.Cache {
		if backend == nil {
			return nil
		}
		return &cache.Tolerant{Cache: backend, Logger: logger, OnError: func(string, error) { metrics.Cache(name, "error") }}
	}
	scfg.Cache = tolerant("response")
	if r, ok := backend.(*cache.Redis); ok {
		// Replicas share one count through the cache's Redis.
		scfg.RateLimits.Store = ratelimit.NewRedis(r.Scripter(), r.Prefix())
	}
	if c.Index != "" {
		acfg, err := c.ground(ctx, &scfg, client, logger, obs, tolerant("analysis"), tracing)
		if err != nil {
			return err
		}
		defer acfg.Live.Close()
		hup := make(chan os.Signal, 1)
		signal.Notify(hup, syscall.SIGHUP) // caught from here on
		defer signal.Stop(hup)
		acfg.Signals = hup
		adm, err := admin.New(acfg)
		if err != nil {
			return fmt.Errorf("serve: %w", err)
		}
		scfg.Admin = append(scfg.Admin, adm.Routes()...)
		wctx, stop := context.WithCancel(ctx)
		ran := make(chan struct{})
		go func() { defer close(ran); adm.Run(wctx) }()
		defer func() { stop(); <-ran }() // a running ingest job is cancelled and waited for
		writeLog, closeDB := c.wireInsights(ctx, &scfg, scfg.Grounder.(*grounding.Grounder), acfg.Live, metrics, logger)
		defer closeDB()
		lctx, stopLog := context.WithCancel(context.WithoutCancel(ctx))
		logged := make(chan struct{})
		go func() { defer close(logged); writeLog(lctx) }()
		// The log's writer stops after the server, which has drained by then, and writes what is left.
		defer func() { stopLog(); <-logged }()
	}
	page, err := webui.New(webui.Config{Site: c.siteName(), Model: pageModel(scfg), AuthRequired: len(scfg.APIKeys) > 0,
		EmbedOrigins: scfg.Embed.Origins})
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	scfg.Page = page
	if c.MetricsListen != "" {
		// /metrics names the models, the index version and the traffic; an operator who keeps it off the
		// public port serves it on an address of its own, with nothing else there.
		scfg.Metrics = nil
		stopMetrics, err := serveMetrics(ctx, c.MetricsListen, metrics.Handler(), logger)
		if err != nil {
			return err
		}
		defer stopMetrics()
	}
	logged := scfg.Redacted() // what is logged of a config holding keys is its redacted form
	logger.Info("serving", "listen", scfg.Listen, "page", "http://"+scfg.Listen+"/", "upstream", ccfg.Redacted().Primary,
		"fallback", ccfg.Redacted().Fallback, "client_auth", len(logged.APIKeys) > 0, "admin_api", len(logged.AdminKeys) > 0,
		"index", c.Index, "cache", c.Cache.Name(), "cache_ttl", scfg.CacheTTL, "backends", c.Backends.Names())
	return server.New(scfg, client).Run(ctx)
}

// pageModel is the model the chat page asks by default: the first model served.
func pageModel(scfg server.Config) string {
	if len(scfg.Models) > 0 {
		return scfg.Models[0].ID
	}
	return "ragproxy"
}

// openCache opens the cache backend (see cache.Open); nil when the cache is off.
func openCache(ctx context.Context, b cache.BackendConfig, logger *slog.Logger) (cache.Cache, func(), error) {
	c, release, err := cache.Open(ctx, b, logger)
	switch {
	case err != nil && b.RedisURL != "":
		return nil, nil, fmt.Errorf("serve: --redis-url: %w", err)
	case err != nil:
		return nil, nil, fmt.Errorf("serve: %w", err)
	}
	return c, release, nil
}
