package observability

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// Tracing makes OpenTelemetry spans for ragproxy's requests and carries W3C trace context (traceparent,
// tracestate; W3C Trace Context Recommendation) in from clients and out to the upstream. A nil *Tracing is
// tracing off: every method is then a no-op that allocates nothing, so the untraced path costs a nil check.
// It is safe for concurrent use.
type Tracing struct {
	tracer trace.Tracer
	prop   propagation.TextMapPropagator
}

// TracerName is the instrumentation scope of ragproxy's spans.
const TracerName = "github.com/ragproxy/ragproxy"

// NewTracing returns the Tracing of spans made by tp; nil tp gives nil, tracing off.
func NewTracing(tp trace.TracerProvider) *Tracing {
	if tp == nil {
		return nil
	}
	return &Tracing{tracer: tp.Tracer(TracerName), prop: propagation.TraceContext{}}
}

// NewOTLPProvider returns a tracer provider that batches spans to an OTLP/HTTP endpoint, configured the standard
// way by the OTEL_EXPORTER_OTLP_* environment variables (endpoint, headers, timeout, compression; OpenTelemetry
// "OTLP Exporter Configuration"), which the exporter reads itself. service names the resource's service.name.
// Shut it down to flush the last spans.
func NewOTLPProvider(ctx context.Context, service string) (*sdktrace.TracerProvider, error) {
	exp, err := otlptracehttp.New(ctx)
	if err != nil {
		return nil, fmt.Errorf("otlp exporter: %w", err)
	}
	return sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(serviceResource(service))), nil
}

// Start starts a span named name as a child of ctx's span. With tracing off it returns ctx and a no-op span.
func (t *Tracing) Start(ctx context.Context, name string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	if t == nil {
		return ctx, trace.SpanFromContext(ctx)
	}
	return t.tracer.Start(ctx, name, opts...)
}

// Record adds a finished span named name, from start to end, as a child of ctx's span: a stage measured
// elsewhere (a retrieval stage's Durations) becomes a span with the very same times.
func (t *Tracing) Record(ctx context.Context, name string, start, end time.Time, attrs ...attribute.KeyValue) {
	if t == nil {
		return
	}
	_, span := t.tracer.Start(ctx, name, trace.WithTimestamp(start), trace.WithAttributes(attrs...))
	span.End(trace.WithTimestamp(end))
}

// Extract returns ctx with the trace context a client sent in h, if any.
func (t *Tracing) Extract(ctx context.Context, h http.Header) context.Context {
	if t == nil {
		return ctx
	}
	return t.prop.Extract(ctx, propagation.HeaderCarrier(h))
}

// Transport wraps rt (nil: http.DefaultTransport) so that each request to a model API gets a client span with
// the GenAI semantic conventions' attributes (OpenTelemetry "Semantic conventions for generative AI systems":
// gen_ai.operation.name, gen_ai.provider.name, gen_ai.request.model, gen_ai.response.model, gen_ai.usage.*)
// and carries the span's traceparent upstream. The span ends when the response body is closed, so that a
// stream's span lasts as long as the stream; ragproxy.time_to_first_byte_ms is when its first byte arrived,
// the upstream's time to first token for a stream.
func (t *Tracing) Transport(rt http.RoundTripper) http.RoundTripper {
	if rt == nil {
		rt = http.DefaultTransport
	}
	if t == nil {
		return rt
	}
	return &tracingTransport{t: t, next: rt}
}

type tracingTransport struct {
	t    *Tracing
	next http.RoundTripper
}

func (tt *tracingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	var body struct {
		Model  string `json:"model"`
		Stream bool   `json:"stream"`
	}
	if req.GetBody != nil {
		if rc, err := req.GetBody(); err == nil {
			_ = json.NewDecoder(rc).Decode(&body)
			rc.Close()
		}
	}
	op := "chat"
	if bytes.HasSuffix([]byte(req.URL.Path), []byte("/embeddings")) {
		op = "embeddings"
	}
	ctx, span := tt.t.tracer.Start(req.Context(), op+" "+body.Model, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attribute.String("gen_ai.operation.name", op), attribute.String("gen_ai.provider.name", "openai"),
			attribute.String("gen_ai.request.model", body.Model), attribute.Bool("ragproxy.stream", body.Stream),
			attribute.String("server.address", req.URL.Hostname()), attribute.String("http.request.method", req.Method)))
	req = req.Clone(ctx)
	tt.t.prop.Inject(ctx, propagation.HeaderCarrier(req.Header))
	start := time.Now()
	resp, err := tt.next.RoundTrip(req)
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
		span.End()
		return nil, err
	}
	span.SetAttributes(attribute.Int("http.response.status_code", resp.StatusCode))
	if resp.StatusCode >= 400 {
		span.SetStatus(codes.Error, resp.Status)
	}
	resp.Body = &tracedBody{ReadCloser: resp.Body, span: span, start: start, stream: body.Stream}
	return resp, nil
}

// tracedBody ends its span when closed, with the time of the first byte and the usage the body reported.
type tracedBody struct {
	io.ReadCloser
	span   trace.Span
	start  time.Time
	stream bool

	once  sync.Once
	first bool
	tail  []byte // the last bytes read: the usage of a completion or of a stream's last chunk is there
}

// usageTail is how much of a body's end tracedBody keeps to find its usage in.
const usageTail = 4 << 10

func (b *tracedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		if !b.first {
			b.first = true
			b.span.SetAttributes(attribute.Float64("ragproxy.time_to_first_byte_ms",
				float64(time.Since(b.start).Microseconds())/1000))
		}
		b.tail = append(b.tail, p[:n]...)
		if len(b.tail) > 2*usageTail {
			b.tail = append(b.tail[:0], b.tail[len(b.tail)-usageTail:]...)
		}
	}
	return n, err
}

func (b *tracedBody) Close() error {
	err := b.ReadCloser.Close()
	b.once.Do(func() {
		if model, in, out, ok := lastUsage(b.tail); ok {
			b.span.SetAttributes(attribute.String("gen_ai.response.model", model),
				attribute.Int("gen_ai.usage.input_tokens", in), attribute.Int("gen_ai.usage.output_tokens", out))
		}
		b.span.End()
	})
	return err
}

// lastUsage finds the usage of an OpenAI completion body, or of a stream's usage chunk, at the end of tail.
func lastUsage(tail []byte) (model string, in, out int, ok bool) {
	i := bytes.LastIndex(tail, []byte(`"usage"`))
	if i < 0 {
		return "", 0, 0, false
	}
	// The object holding "usage" starts at the last '{' before it that opens a line of its own or the body.
	start := bytes.LastIndex(tail[:i], []byte("data: {"))
	if start >= 0 {
		start += len("data: ")
	} else if start = bytes.IndexByte(tail, '{'); start < 0 || start > i {
		return "", 0, 0, false
	}
	var obj struct {
		Model string `json:"model"`
		Usage *struct {
			Prompt     int `json:"prompt_tokens"`
			Completion int `json:"completion_tokens"`
		} `json:"usage"`
	}
	end := bytes.IndexByte(tail[start:], '\n')
	text := tail[start:]
	if end >= 0 {
		text = text[:end]
	}
	if json.Unmarshal(text, &obj) != nil || obj.Usage == nil {
		return "", 0, 0, false
	}
	return obj.Model, obj.Usage.Prompt, obj.Usage.Completion, true
}

// serviceResource names the service spans come from (OpenTelemetry resource semantic conventions, service.name).
func serviceResource(service string) *resource.Resource {
	return resource.NewSchemaless(attribute.String("service.name", service))
}
