package server

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/ragproxy/ragproxy/compat"
	"github.com/ragproxy/ragproxy/observability"
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

// filterTimer adds up the time an answer's content filters (the link filter) take over one response, for the
// "link filter" span: the filter runs on each content delta, so its span is the sum of those runs, placed from
// the first run on.
type filterTimer struct {
	first time.Time
	total time.Duration
	calls int
}

func (t *filterTimer) since(start time.Time) {
	if t.calls == 0 {
		t.first = start
	}
	t.total += time.Since(start)
	t.calls++
}

// record adds the "link filter" span under ctx's span, when the filters ran.
func (t *filterTimer) record(ctx context.Context, tr *observability.Tracing) {
	if t.calls > 0 {
		tr.Record(ctx, "link filter", t.first, t.first.Add(t.total), attribute.Int("ragproxy.filter.calls", t.calls))
	}
}

// timedFilters returns newFilter with each filter it makes timed into t; with tracing off, or no filter, it is
// newFilter itself.
func (s *Server) timedFilters(newFilter func() ContentFilter, t *filterTimer) func() ContentFilter {
	if s.cfg.Tracing == nil || newFilter == nil {
		return newFilter
	}
	return func() ContentFilter { return timedFilter{f: newFilter(), t: t} }
}

// timedFilter is a ContentFilter that times the one it wraps; it is a Citer that passes on what the wrapped
// filter cites, and cites nothing when that is no Citer (as citations reads a filter that is none).
type timedFilter struct {
	f ContentFilter
	t *filterTimer
}

func (tf timedFilter) Filter(delta string) string {
	start := time.Now()
	defer tf.t.since(start)
	return tf.f.Filter(delta)
}

func (tf timedFilter) Trailer() string {
	start := time.Now()
	defer tf.t.since(start)
	return tf.f.Trailer()
}

func (tf timedFilter) Annotations() []compat.Annotation {
	a, _ := citations(tf.f)
	return a
}

func (tf timedFilter) Events() []json.RawMessage {
	_, e := citations(tf.f)
	return e
}
