package main

import (
	"context"
	"log/slog"
	"net/http"
	"os"
	"time"

	"github.com/ragproxy/ragproxy/observability"
	"github.com/ragproxy/ragproxy/upstream"
)

// openTracing turns tracing on when the standard OTLP variables name an endpoint (OTEL_EXPORTER_OTLP_ENDPOINT
// or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) and OTEL_TRACES_EXPORTER is not "none"; the exporter reads the rest of
// the OTEL_EXPORTER_OTLP_* variables itself. Off, it returns nil and costs nothing. The returned func flushes
// and stops the exporter.
func openTracing(ctx context.Context, logger *slog.Logger) (*observability.Tracing, func(), error) {
	endpoint := os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
	if endpoint == "" {
		endpoint = os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT")
	}
	if endpoint == "" || os.Getenv("OTEL_TRACES_EXPORTER") == "none" {
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
