// Package observability holds ragproxy's Prometheus metrics and its structured
// logging.
//
// A [Metrics] value owns its own prometheus.Registry (never the process-wide
// default registry), exposes it through [Metrics.Handler] for GET /metrics, and
// offers small typed methods (ObserveRequest, Operation, Tokens, Cache, ...)
// that the server, the retrieval pipeline and the ingest command call. Metric
// names follow the OpenTelemetry GenAI semantic conventions where one exists
// (gen_ai.client.operation.duration, gen_ai.client.token.usage,
// gen_ai.server.time_to_first_token), translated to Prometheus names the way the
// OpenTelemetry Prometheus exporter does, with the conventions' bucket
// boundaries; the rest are ragproxy_* metrics.
//
// Every label value is bounded: values outside a known set (models outside the
// configured allow-list, unknown routes, stages, caches and outcomes) collapse
// to "other", so a client cannot grow the series count by sending new strings.
//
// Per-stream figures (time to first token, stream duration, tokens) are
// recorded by a [StreamRecorder] driven from inside the SSE writer, because
// middleware only sees the time to response headers.
//
// [NewLogger] builds the log/slog logger (JSON when the output is not a
// terminal, text otherwise, secrets redacted) and [LogRequest] writes the one
// line per request.
//
// Metrics and its methods are safe for concurrent use. A StreamRecorder is
// safe for concurrent use too, though it normally lives in one request's
// goroutine.
package observability
