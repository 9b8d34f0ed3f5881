package server

import (
	"net/http"

	"github.com/gofiber/fiber/v2"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// traceRequest makes the request's root span, a child of the trace context the client sent (W3C traceparent),
// so that the spans of its cache lookup, grounding and upstream call, which run under c.UserContext(), form one
// trace. With tracing off it only calls the next handler.
func (s *Server) traceRequest(c *fiber.Ctx) error {
	if s.cfg.Tracing == nil {
		return c.Next()
	}
	h := http.Header{}
	for _, k := range []string{"traceparent", "tracestate"} {
		if v := c.Get(k); v != "" {
			h.Set(k, v)
		}
	}
	ctx := s.cfg.Tracing.Extract(c.UserContext(), h)
	ctx, span := s.cfg.Tracing.Start(ctx, c.Method()+" "+c.Path(), trace.WithSpanKind(trace.SpanKindServer),
		trace.WithAttributes(attribute.String("http.request.method", c.Method()), attribute.String("url.path", c.Path()),
			attribute.String("ragproxy.request_id", requestID(c))))
	c.SetUserContext(ctx)
	err := c.Next()
	status := c.Response().StatusCode()
	if err != nil {
		if fe, ok := err.(*fiber.Error); ok {
			status = fe.Code
		}
		span.RecordError(err)
	}
	span.SetAttributes(attribute.Int("http.response.status_code", status))
	if status >= 500 {
		span.SetStatus(codes.Error, http.StatusText(status))
	}
	span.End()
	return err
}
