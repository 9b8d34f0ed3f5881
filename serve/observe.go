package serve

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/ragproxy/ragproxy/cache"
	"github.com/ragproxy/ragproxy/observability"
	"github.com/ragproxy/ragproxy/server"
	"github.com/ragproxy/ragproxy/upstream"
)

// Readiness builds what /readyz probes: with an index, Qdrant and Neo4j when configured (the answers need them:
// their searches and communities fail while they are down), and Redis when it is the cache (reported only: a
// cache that is down makes requests uncached). It opens connections of its own, since a reload closes the
// backends of the version it replaces, and each probe's outcome goes to the ragproxy_backend_up gauge. The
// returned func closes the connections; the Readiness is nil when there is nothing to probe.
func Readiness(ctx context.Context, c Config, cc cache.Cache, metrics *observability.Metrics) (*server.Readiness, func(), error) {
	var (
		probes   []server.Backend
		closeAll = func() {}
	)
	if c.Index != "" {
		ps, closeProbes, err := c.Backends.Probes(ctx, c.Index)
		if err != nil {
			return nil, nil, fmt.Errorf("serve: %w", err)
		}
		closeAll = closeProbes
		for _, p := range ps {
			probes = append(probes, server.Backend{Name: p.Name, Required: true, Probe: p.Check})
		}
	}
	if r, ok := cc.(*cache.Redis); ok {
		probes = append(probes, server.Backend{Name: "redis", Probe: r.Ping})
	}
	if len(probes) == 0 {
		return nil, closeAll, nil
	}
	return server.NewReadiness(server.ReadinessConfig{Backends: probes, OnProbe: metrics.BackendUp}), closeAll, nil
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

// openTracing turns tracing on when endpoint names an OTLP collector; the exporter reads the standard
// OTEL_EXPORTER_OTLP_* variables itself. Off, it returns nil and costs nothing. The returned func flushes and
// stops the exporter.
func openTracing(ctx context.Context, endpoint string, logger *slog.Logger) (*observability.Tracing, func(), error) {
	if endpoint == "" {
		return nil, func() {}, nil
	}
	tp, err := observability.NewOTLPProvider(ctx, "ragproxy")
	if err != nil {
		return nil, nil, err
	}
	logger.Info("tracing on", "otlp_endpoint", endpoint)
	return observability.NewTracing(tp), func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := tp.Shutdown(sctx); err != nil {
			logger.Warn("tracing: flushing the last spans failed", "err", err)
		}
	}, nil
}

// tracedClient is the upstream HTTP client with a span around each model call, or nil (the client's default)
// with tracing off.
func tracedClient(t *observability.Tracing) *http.Client {
	if t == nil {
		return nil
	}
	return &http.Client{Transport: t.Transport(upstream.NewTransport(64))}
}
