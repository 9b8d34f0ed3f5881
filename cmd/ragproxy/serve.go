package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/ragproxy/ragproxy/admin"
	"github.com/ragproxy/ragproxy/cache"
	"github.com/ragproxy/ragproxy/grounding"
	"github.com/ragproxy/ragproxy/observability"
	"github.com/ragproxy/ragproxy/ratelimit"
	"github.com/ragproxy/ragproxy/retrieval"
	"github.com/ragproxy/ragproxy/server"
	"github.com/ragproxy/ragproxy/upstream"
	"github.com/ragproxy/ragproxy/webui"
)

// runServe parses serve's flags, builds the gateway (upstream client, cache, rate limits, the index with its
// admin API, the chat page) and runs it until ctx ends.
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
		Models:    append([]string{"ragproxy", f.assistantName(), f.up.model, f.fallbackModel}, f.assistants.list.Names()...),
		Upstreams: []string{"primary", "fallback"}, Tasks: server.Tasks(), Stages: retrieval.Stages(),
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
	tracing, stopTracing, err := openTracing(ctx, logger)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	defer stopTracing()
	ccfg.HTTPClient = tracedClient(tracing)
	client, err := upstream.New(ccfg)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	scfg := server.Config{
		Listen:             f.listen,
		APIKeys:            splitList(f.apiKeys),
		AdminKeys:          splitList(f.adminKeys),
		CORSOrigins:        splitList(f.corsOrigins),
		Embed:              f.embed.config(),
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
		Tracing:            tracing,
	}
	backend, closeCache, err := f.openCache(ctx, logger)
	if err != nil {
		return err
	}
	defer closeCache()
	ready, closeReady, err := f.readiness(ctx, backend, metrics)
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
	scfg.Cache, scfg.CacheTTL = tolerant("response"), f.cacheTTL
	scfg.RateLimits = server.RateLimits{RequestsPerMinute: f.rpm, TokensPerMinute: f.tpm}
	if r, ok := backend.(*cache.Redis); ok {
		// Replicas share one count through the cache's Redis.
		scfg.RateLimits.Store = ratelimit.NewRedis(r.Scripter(), r.Prefix())
	}
	if f.index != "" {
		acfg, err := f.ground(ctx, &scfg, client, logger, obs, tolerant("analysis"))
		if g, ok := scfg.Grounder.(*grounding.Grounder); ok {
			g.Tracing = tracing
		}
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
	}
	page, err := webui.New(webui.Config{Site: f.siteName(), Model: f.pageModel(scfg), AuthRequired: len(scfg.APIKeys) > 0,
		EmbedOrigins: scfg.Embed.Origins})
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	scfg.Page = page
	if f.metricsListen != "" {
		// /metrics names the models, the index version and the traffic; an operator who keeps it off the
		// public port serves it on an address of its own, with nothing else there.
		scfg.Metrics = nil
		stopMetrics, err := serveMetrics(ctx, f.metricsListen, metrics.Handler(), logger)
		if err != nil {
			return err
		}
		defer stopMetrics()
	}
	logged := scfg.Redacted() // what is logged of a config holding keys is its redacted form
	logger.Info("serving", "listen", f.listen, "page", "http://"+f.listen+"/", "upstream", ccfg.Redacted().Primary, "fallback", ccfg.Redacted().Fallback,
		"client_auth", len(logged.APIKeys) > 0, "admin_api", len(logged.AdminKeys) > 0, "index", f.index, "cache", f.cacheName(), "cache_ttl", f.cacheTTL, "backends", f.backends.Names())
	return server.New(scfg, client).Run(ctx)
}

// serveMetrics serves GET /metrics alone on addr until the returned stop is called.
func serveMetrics(ctx context.Context, addr string, h http.Handler, logger *slog.Logger) (stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("serve: --metrics-listen: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", h)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, BaseContext: func(net.Listener) context.Context { return ctx }}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error("metrics listener failed", "listen", addr, "err", err)
		}
	}()
	logger.Info("serving metrics", "listen", ln.Addr().String())
	return func() { _ = srv.Close(); <-done }, nil
}

// openCache opens the cache backend (see cache.Open); nil with --no-cache.
func (f serveFlags) openCache(ctx context.Context, logger *slog.Logger) (cache.Cache, func(), error) {
	c, release, err := cache.Open(ctx, f.cacheBackend(), logger)
	switch {
	case err != nil && f.redisURL != "":
		return nil, nil, fmt.Errorf("serve: --redis-url: %w", err)
	case err != nil:
		return nil, nil, fmt.Errorf("serve: %w", err)
	}
	return c, release, nil
}
