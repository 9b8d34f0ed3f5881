package grounding

import (
	"context"
	"encoding/hex"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/ragproxy/ragproxy/compat/openaitest"
	"github.com/ragproxy/ragproxy/observability"
	"github.com/ragproxy/ragproxy/retrieval"
	"github.com/ragproxy/ragproxy/server"
	"github.com/ragproxy/ragproxy/upstream"
)

// otlpReceiver is an OTLP/HTTP trace receiver (OTLP specification, "OTLP/HTTP": POST /v1/traces, binary
// protobuf ExportTraceServiceRequest) that keeps every span it was sent.
type otlpReceiver struct {
	mu      sync.Mutex
	spans   []*tracepb.Span
	arrived chan struct{} // closed and replaced on every export
}

func (o *otlpReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	var req collectortrace.ExportTraceServiceRequest
	if err != nil || r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/x-protobuf" || proto.Unmarshal(body, &req) != nil {
		http.Error(w, "bad export", http.StatusBadRequest)
		return
	}
	o.mu.Lock()
	for _, rs := range req.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			o.spans = append(o.spans, ss.Spans...)
		}
	}
	close(o.arrived)
	o.arrived = make(chan struct{})
	o.mu.Unlock()
	out, _ := proto.Marshal(&collectortrace.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

// waitFor waits until spans of every name in names have arrived, and returns all the spans so far.
func (o *otlpReceiver) waitFor(t *testing.T, names map[string]int) []*tracepb.Span {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		o.mu.Lock()
		spans, arrived := append([]*tracepb.Span(nil), o.spans...), o.arrived
		o.mu.Unlock()
		count := map[string]int{}
		for _, s := range spans {
			count[s.Name]++
		}
		done := true
		for n, want := range names {
			done = done && count[n] >= want
		}
		if done {
			return spans
		}
		select {
		case <-arrived:
		case <-deadline:
			t.Fatalf("spans %v arrived, want at least %v", count, names)
		}
	}
}

// TestTraceOfStreamedAnswer checks the trace of a streamed grounded follow-up, exported over OTLP/HTTP to the
// endpoint the standard variable names: one trace, the client's (its traceparent), with the request's span under
// the client's, the admission, the grounding, the analysis (its model call a GenAI client span), the retrieval and
// its stages under it, the answer's model call with its time to first byte and usage, the stream with the link
// filter's time under it, and the traceparent of that call sent upstream.
func TestTraceOfStreamedAnswer(t *testing.T) {
	rec := &otlpReceiver{arrived: make(chan struct{})}
	collector := httptest.NewServer(rec)
	defer collector.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.URL)
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
	ctx := context.Background()
	exp, err := otlptracehttp.New(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp)) // each span is exported as it ends
	defer func() { _ = tp.Shutdown(ctx) }()
	tracing := observability.NewTracing(tp)

	fake := openaitest.NewServer(openaitest.Config{Reply: func(req *openaitest.Request) openaitest.Reply {
		if len(req.Messages) > 0 && strings.HasPrefix(req.Messages[0].Text(), "You prepare search queries") {
			return openaitest.Reply{Content: `{"retrieval_needed":true,"rewrites":["out-of-state tuition","nonresident tuition","tuition per semester"]}`}
		}
		return openaitest.Reply{Content: "Out-of-state tuition is higher."}
	}})
	defer fake.Close()
	client, err := upstream.New(upstream.Config{Backoff: time.Millisecond, HTTPClient: &http.Client{Transport: tracing.Transport(nil)},
		Primary: upstream.Endpoint{BaseURL: fake.URL(), Model: "gpt-4o-mini"}})
	if err != nil {
		t.Fatal(err)
	}
	r, tok := exampleIndex(t)
	g := &Grounder{Retriever: r, Tokenizer: tok, Tracing: tracing,
		Analyzer: &retrieval.LLMAnalyzer{Ask: upstream.Asker{Client: client}.Ask}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	sctx, stop := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- server.New(server.Config{Grounder: g, Tracing: tracing}, client).Serve(sctx, ln) }()
	defer func() { stop(); <-served }()

	const traceID, parentID = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	body := `{"model":"gpt-4o-mini","stream":true,"messages":[{"role":"user","content":"how much is in-state tuition per semester?"},` +
		`{"role":"assistant","content":"It is $4,850."},{"role":"user","content":"and for out-of-state students?"}]}`
	req, _ := http.NewRequest(http.MethodPost, "http://"+ln.Addr().String()+"/v1/chat/completions", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("traceparent", "00-"+traceID+"-"+parentID+"-01")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(out), "[DONE]") {
		t.Fatalf("status %d: %.300s", resp.StatusCode, out)
	}

	spans := rec.waitFor(t, map[string]int{"POST /v1/chat/completions": 1, "ground": 1, "analysis": 1,
		"analysis model call": 1, "chat gpt-4o-mini": 2, "retrieval": 1, "retrieval embed": 1, "retrieval pages": 1,
		"retrieval communities": 1, "retrieval chunks": 1, "retrieval context": 1, "admission": 1, "stream": 1,
		"link filter": 1})
	byID := map[string]*tracepb.Span{}
	for _, s := range spans {
		if got := hex.EncodeToString(s.TraceId); got != traceID {
			t.Errorf("span %q is in trace %s, want the client's %s", s.Name, got, traceID)
		}
		byID[hex.EncodeToString(s.SpanId)] = s
	}
	parent := func(s *tracepb.Span) string {
		if p := byID[hex.EncodeToString(s.ParentSpanId)]; p != nil {
			return p.Name
		}
		return "client " + hex.EncodeToString(s.ParentSpanId)
	}
	attrs := func(s *tracepb.Span) map[string]string {
		m := map[string]string{}
		for _, kv := range s.Attributes {
			m[kv.Key] = strings.Trim(kv.Value.String(), " ")
		}
		return m
	}
	wantParent := map[string]string{"POST /v1/chat/completions": "client " + parentID, "ground": "POST /v1/chat/completions",
		"analysis": "ground", "analysis model call": "ground", "retrieval": "ground", "retrieval embed": "ground",
		"retrieval context": "ground", "admission": "POST /v1/chat/completions", "stream": "POST /v1/chat/completions",
		"link filter": "stream"}
	var answer *tracepb.Span
	for _, s := range spans {
		if want, ok := wantParent[s.Name]; ok && parent(s) != want {
			t.Errorf("span %q is under %q, want %q", s.Name, parent(s), want)
		}
		if s.Name != "chat gpt-4o-mini" {
			continue
		}
		a := attrs(s)
		if s.Kind != tracepb.Span_SPAN_KIND_CLIENT || !strings.Contains(a["gen_ai.operation.name"], "chat") ||
			!strings.Contains(a["gen_ai.request.model"], "gpt-4o-mini") || !strings.Contains(a["gen_ai.provider.name"], "openai") {
			t.Errorf("model span lacks the GenAI attributes: kind %v, %v", s.Kind, a)
		}
		switch parent(s) {
		case "analysis model call":
		case "POST /v1/chat/completions":
			answer = s
		default:
			t.Errorf("model span under %q", parent(s))
		}
	}
	if answer == nil {
		t.Fatal("no span of the answer's model call under the request's")
	}
	a := attrs(answer)
	for _, k := range []string{"ragproxy.time_to_first_byte_ms", "gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens"} {
		if a[k] == "" {
			t.Errorf("the answer's model span lacks %s: %v", k, a)
		}
	}
	// The upstream saw the answer call's own span as its parent.
	var sent string
	for _, fr := range fake.Requests() {
		if h := fr.Header.Get("traceparent"); strings.Contains(h, traceID) {
			sent = h
		}
	}
	if want := "00-" + traceID + "-" + hex.EncodeToString(answer.SpanId) + "-01"; sent != want {
		t.Errorf("upstream got traceparent %q, want %q", sent, want)
	}
}
