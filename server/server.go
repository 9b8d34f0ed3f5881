// Package server is ragproxy's HTTP front: a fiber app that speaks OpenAI's
// chat-completions API to any client (Open WebUI, LibreChat, the SDKs, curl)
// and forwards to an OpenAI-compatible upstream through upstream.Client. It
// owns routing, client auth, the body-size limit, request ids, the SSE
// writer with heartbeats, the mapping of every error to OpenAI's error body,
// and graceful draining.
//
// Retrieval plugs in through Grounder and observability through Observer;
// with neither the server is a pure pass-through gateway. A Server is safe
// for concurrent use.
package server

import (
	"context"
	"errors"
	"fmt"
	"github.com/ragproxy/ragproxy/observability"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/adaptor"
	"github.com/gofiber/fiber/v2/middleware/recover"

	"github.com/ragproxy/ragproxy/cache"
	"github.com/ragproxy/ragproxy/compat"
	"github.com/ragproxy/ragproxy/ratelimit"
	"github.com/ragproxy/ragproxy/upstream"
)

// Upstream is what the server needs from the model side; *upstream.Client
// implements it.
type Upstream interface {
	Complete(ctx context.Context, call *upstream.Call) ([]byte, upstream.Served, error)
	Stream(ctx context.Context, call *upstream.Call) (*upstream.Stream, upstream.Served, error)
	Models(ctx context.Context) ([]compat.Model, error)
}

var _ Upstream = (*upstream.Client)(nil)

// ModelAlias is a model id the proxy serves itself.
type ModelAlias struct {
	// ID is the id clients use ("ragproxy").
	ID string
	// Upstream is the model sent upstream for it; "" means the upstream's
	// configured default model.
	Upstream string
	// OwnedBy is shown in /v1/models. Default "ragproxy".
	OwnedBy string
}

// Config configures a Server. The zero value works.
type Config struct {
	// Listen is the address Run listens on. Default 127.0.0.1:8080.
	Listen string
	// APIKeys are the accepted client bearer tokens; empty disables client
	// auth.
	APIKeys []string
	// MaxBodyBytes limits request bodies; larger ones get 413. Default 8 MiB.
	MaxBodyBytes int
	// Heartbeat is the interval of ": ping" comments on a waiting stream. A
	// stream whose upstream has not answered within one interval commits
	// its 200 headers and pings until it does. Default 10s.
	Heartbeat time.Duration
	// ReadTimeout bounds reading one request, headers and body, and the
	// wait for a connection's first request; IdleTimeout the wait for the
	// next request on a kept-alive connection. Defaults 60s and 2m.
	ReadTimeout, IdleTimeout time.Duration
	// MaxConns caps the connections held open at once (more wait to be
	// accepted); MaxConnsPerIP caps those from one client address. Defaults:
	// three quarters of the file-descriptor limit, and a quarter of MaxConns.
	// Behind a reverse proxy every client has the proxy's address: raise
	// MaxConnsPerIP to MaxConns there.
	MaxConns, MaxConnsPerIP int
	// DrainTimeout bounds how long Run waits for in-flight requests after
	// its context ends before cutting them off. Default 30s.
	DrainTimeout time.Duration
	// Models are the aliases listed in /v1/models; any other model id is
	// forwarded upstream unchanged. Default: one alias "ragproxy" for the
	// upstream's default model.
	Models []ModelAlias
	// ListUpstreamModels adds the upstream's own models to /v1/models.
	// Default false.
	ListUpstreamModels bool
	// Grounder, when set, is called for every chat request (retrieval). When
	// it is a Router its routes are served under /v1, and when it is a Varier
	// the response cache keys answers by what it reads of the headers.
	Grounder Grounder
	// Metrics, when set, serves GET /metrics.
	Metrics http.Handler
	// Page, when set, serves GET /, GET /assets/..., GET /widget.js and GET
	// /admin/ (the chat page, its widget and the insights page; see package
	// webui). It is public: the keys it asks for guard /v1 and the admin API.
	Page http.Handler
	// Observer receives request events (metrics, logs). Default no-op.
	Observer Observer
	// Tracing, when set, makes a trace of every request (see tracing.go). Default nil: tracing off.
	Tracing *observability.Tracing
	// Cache, when set, keeps deterministic answers and serves repeats of
	// them without an upstream call (see cache.go). Wrap a networked cache
	// in a cache.Tolerant so its failures become misses. Default none.
	Cache cache.Cache
	// CacheTTL is how long a cached answer is served. Default 1h.
	CacheTTL time.Duration
	// RetrievalSettings, IndexVersion and PromptVersion are part of every
	// response cache key, so an answer is never served from the cache after
	// the index, the retrieval settings or the grounding prompt changed. A
	// Grounder that is a Versioner gives the index version instead. Default "".
	RetrievalSettings string
	IndexVersion      string
	PromptVersion     string
	// RateLimits bound the chat requests and tokens of each client per
	// minute. Default none.
	RateLimits RateLimits
	// CORSOrigins are the browser origins allowed to call the API ("*" for
	// any; each checked by CheckOrigin, invalid ones are ignored): their
	// preflights are answered and responses carry the CORS headers. Default
	// none: browsers may call only from the server's own origin.
	CORSOrigins []string
	// Embed lets the chat widget run on other sites' pages: their origins and its publishable keys (see
	// Embed). Default off.
	Embed Embed
	// AdminKeys are the keys of the admin API under /admin, never accepted on /v1 unless also in APIKeys; Admin
	// are its routes. Without admin keys every /admin request gets 403. Default none.
	AdminKeys []string
	Admin     []Route
	// Ready, when set, probes the backends for /readyz, which reports each of them and answers 503 while one the
	// answers need is down. /healthz never consults it: a backend outage is no reason to restart the process.
	// Default none: ready once listening.
	Ready *Readiness
	// Questions, when set, receives every visitor's question once its answer went out (see QuestionLog).
	// Default none.
	Questions QuestionLog
	// Routes are extra routes under /v1, behind the client keys and counted by the rate limits like a
	// Grounder's (see Router). Default none.
	Routes []Route
	// Logger receives server logs. Default: discard.
	Logger *slog.Logger
}

// Redacted returns c with client keys masked, for logging.
func (c Config) Redacted() Config {
	c.APIKeys, c.AdminKeys, c.Embed.Keys = redactKeys(c.APIKeys), redactKeys(c.AdminKeys), redactKeys(c.Embed.Keys)
	return c
}

// Server is the proxy's HTTP server.
type Server struct {
	cfg      Config
	up       Upstream
	app      *fiber.App
	obs      Observer
	reqObs   RequestObserver
	collect  bool
	cache    *responseCache
	log      *slog.Logger
	aliases  map[string]ModelAlias
	upModels upstreamModels
	draining atomic.Bool
	// acceptErrors logs accept failures once per burst, limitErrors those
	// of the rate-limit store.
	acceptErrors, limitErrors burstLog
	limits                    ratelimit.Store
	// large admits one large request body at a time to decoding.
	large chan struct{}
	// sseWriters are the event streams' write buffers, used again from one stream to the next.
	sseWriters sync.Pool
	// listener is the listener Serve accepts on, once it runs.
	listener atomic.Pointer[cappedListener]
	// callers run the upstream calls of streams (see stream).
	callers *workers

	mu       sync.Mutex
	inflight map[uint64]context.CancelFunc
	nextID   uint64
	stopped  bool
}

// New builds a server that forwards to up.
func New(cfg Config, up Upstream) *Server {
	if cfg.Listen == "" {
		cfg.Listen = "127.0.0.1:8080"
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = 8 << 20
	}
	if cfg.Heartbeat <= 0 {
		cfg.Heartbeat = 10 * time.Second
	}
	if cfg.DrainTimeout <= 0 {
		cfg.DrainTimeout = 30 * time.Second
	}
	if cfg.ReadTimeout <= 0 {
		cfg.ReadTimeout = time.Minute
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = 2 * time.Minute
	}
	if cfg.MaxConns <= 0 {
		cfg.MaxConns = defaultMaxConns()
	}
	if cfg.MaxConnsPerIP <= 0 {
		cfg.MaxConnsPerIP = max(cfg.MaxConns/4, 1)
	}
	if len(cfg.Models) == 0 {
		cfg.Models = []ModelAlias{{ID: "ragproxy"}}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Server{cfg: cfg, up: up, callers: newWorkers(workerIdle), obs: cfg.Observer, log: cfg.Logger,
		aliases: map[string]ModelAlias{}, inflight: map[uint64]context.CancelFunc{}}
	if s.obs == nil {
		s.obs = nopObserver{}
	}
	if co, ok := s.obs.(ContentObserver); ok {
		s.collect = co.CollectContent()
	}
	s.reqObs, _ = s.obs.(RequestObserver)
	s.cache = newResponseCache(cfg, s.upstreamModel, s.indexVersion)
	s.large = make(chan struct{}, 1)
	s.limits = cfg.RateLimits.Store
	if s.limits == nil {
		s.limits = &ratelimit.Memory{}
	}
	for _, m := range cfg.Models {
		if m.OwnedBy == "" {
			m.OwnedBy = "ragproxy"
		}
		s.aliases[m.ID] = m
	}
	s.app = fiber.New(fiber.Config{
		AppName:               "ragproxy",
		BodyLimit:             cfg.MaxBodyBytes,
		DisableStartupMessage: true,
		ErrorHandler:          s.handleError,
		// A slow or silent client cannot hold a connection: the request must arrive within ReadTimeout, and an
		// idle keep-alive connection (which must not hold a drain open either) closes after IdleTimeout. No
		// write timeout: answers stream for as long as they take.
		ReadTimeout: cfg.ReadTimeout,
		IdleTimeout: cfg.IdleTimeout,
	})
	s.app.Server().MaxConnsPerIP = cfg.MaxConnsPerIP
	s.routes()
	return s
}

// Run listens on Config.Listen and serves until ctx ends, then drains.
func (s *Server) Run(ctx context.Context) error {
	ln, err := net.Listen("tcp", s.cfg.Listen)
	if err != nil {
		return fmt.Errorf("server: listen: %w", err)
	}
	return s.Serve(ctx, ln)
}

// Serve serves on ln until ctx ends. It then stops accepting connections,
// reports not-ready, lets in-flight requests and streams finish for up to
// DrainTimeout, cancels whatever is still running, and returns.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	// A refused body may still be on its way when the connection closes: read and drop up to twice the body
	// limit of it (at least 16 MiB).
	capped := newCappedListener(ln, s.cfg.MaxConns, max(2*int64(s.cfg.MaxBodyBytes), 16<<20), func(err error) {
		s.acceptErrors.note(s.log, "accepting connections failed; retrying", err)
	})
	s.listener.Store(capped)
	ln = capped
	errc := make(chan error, 1)
	go func() { errc <- s.app.Listener(ln) }()
	select {
	case err := <-errc:
		s.cutOff()
		if err != nil {
			return fmt.Errorf("server: serve: %w", err)
		}
		return nil
	case <-ctx.Done():
	}
	s.draining.Store(true)
	s.log.Info("draining", "timeout", s.cfg.DrainTimeout)
	err := s.app.ShutdownWithTimeout(s.cfg.DrainTimeout)
	s.cutOff()
	if serr := <-errc; serr != nil && err == nil {
		err = serr
	}
	if errors.Is(err, context.DeadlineExceeded) {
		s.log.Warn("drain timed out; in-flight requests were cut off")
		// Give cut-off streams a moment to write their error frame.
		_ = s.app.ShutdownWithTimeout(time.Second)
		return nil
	}
	if err != nil {
		return fmt.Errorf("server: shutdown: %w", err)
	}
	return nil
}

// track registers a request's cancel so cutOff can end it.
func (s *Server) track(cancel context.CancelFunc) (untrack func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		cancel()
		return func() {}
	}
	s.nextID++
	id := s.nextID
	s.inflight[id] = cancel
	return func() {
		s.mu.Lock()
		delete(s.inflight, id)
		s.mu.Unlock()
	}
}

func (s *Server) cutOff() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopped = true
	for id, cancel := range s.inflight {
		cancel()
		delete(s.inflight, id)
	}
}

func (s *Server) routes() {
	s.app.Use(s.requestMeta)
	s.app.Use(s.traceRequest)
	// A panicking handler becomes a 500 in OpenAI's error body (requestMeta maps the error) instead of ending the
	// process; the stack goes to the log.
	s.app.Use(recover.New(recover.Config{EnableStackTrace: true, StackTraceHandler: func(c *fiber.Ctx, r any) {
		s.log.Error("handler panicked", "request_id", requestID(c), "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
	}}))
	if mw := s.corsMiddleware(); mw != nil {
		s.app.Use(mw)
	}
	s.app.Get("/healthz", s.healthz)
	s.app.Get("/readyz", s.readyz)
	v1 := s.app.Group("/v1", s.auth, s.jsonBody)
	v1.Post("/chat/completions", s.chat)
	v1.Get("/models", s.listModels)
	v1.Get("/models/+", s.getModel)
	if r, ok := s.cfg.Grounder.(Router); ok {
		for _, rt := range r.Routes() {
			v1.Add(rt.Method, rt.Path, s.extraRoute(rt))
		}
	}
	for _, rt := range s.cfg.Routes {
		v1.Add(rt.Method, rt.Path, s.extraRoute(rt))
	}
	if s.cfg.Page != nil {
		// The insights page is public like the chat page (it asks for an admin key, which its calls carry); it
		// goes before the admin API, whose routes all want the key.
		page := adaptor.HTTPHandler(s.cfg.Page)
		s.app.Get("/admin", page)
		s.app.Get("/admin/", page)
	}
	s.adminRoutes()
	if s.cfg.Metrics != nil {
		s.app.Get("/metrics", adaptor.HTTPHandler(s.cfg.Metrics))
	}
	if s.cfg.Page != nil {
		page := adaptor.HTTPHandler(s.cfg.Page)
		s.app.Get("/", page)
		s.app.Get("/assets/*", page)
		s.app.Get("/widget.js", page)
	}
}

// extraRoute serves a Grounder's route: the body goes in, the result comes
// out as JSON, and an error takes the one path to OpenAI's error body. The
// rate limits admit it like a chat request: a retrieval costs a query
// analysis, a model call when online.
func (s *Server) extraRoute(rt Route) fiber.Handler {
	return func(c *fiber.Ctx) error {
		if s.cfg.RateLimits.enabled() {
			if err := s.admit(c.UserContext(), c, s.clientKey(c)); err != nil {
				return err
			}
		}
		req, err := routeRequest(c)
		if err != nil {
			return err
		}
		out, err := rt.Handle(c.UserContext(), req)
		if err != nil {
			return err
		}
		return writeRouteResult(c, rt, out)
	}
}

// routeRequest collects what a Route's handler reads of the request. fiber matches routes on the path as sent,
// so parameters are still percent-encoded (a page URL travels as one escaped segment) and are decoded here.
func routeRequest(c *fiber.Ctx) (*Request, error) {
	req := &Request{Body: c.Body(), Params: map[string]string{}}
	for _, name := range c.Route().Params {
		v, err := url.PathUnescape(c.Params(name))
		if err != nil {
			return nil, compat.InvalidRequest(name, "", "path parameter %q is not valid percent-encoding: %v", name, err)
		}
		if strings.HasPrefix(name, "*") {
			name = "*" // fiber names wildcards "*1", "*2", ...; routes have at most one
			// Without strict routing fiber matches "/x/" like "/x" and leaves the slash out of a trailing
			// wildcard, which always runs to the end of the path: a page URL keeps it.
			if strings.HasSuffix(c.Path(), "/") && !strings.HasSuffix(v, "/") {
				v += "/"
			}
		}
		req.Params[name] = v
	}
	q, err := url.ParseQuery(string(c.Request().URI().QueryString()))
	if err != nil {
		return nil, compat.InvalidRequest("", "", "the query string is not valid: %v", err)
	}
	req.Query = q
	return req, nil
}

// writeRouteResult writes a handler's result as JSON (a Raw result as it is) with the route's success status.
func writeRouteResult(c *fiber.Ctx, rt Route, out any) error {
	if rt.Status != 0 {
		c.Status(rt.Status)
	}
	if raw, ok := out.(Raw); ok {
		c.Set(fiber.HeaderContentType, raw.ContentType)
		return c.Send(raw.Body)
	}
	return c.JSON(out)
}

func redactKeys(keys []string) []string {
	out := make([]string, len(keys))
	for i := range out {
		out[i] = "REDACTED"
	}
	return out
}
