package server

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/ragproxy/ragproxy/observability"
	"github.com/ragproxy/ragproxy/upstream"
)

// MetricsObserver turns the server's events into observability.Metrics and
// writes the one log line per request. Set it as Config.Observer, and have
// the Grounder report each retrieval to ObserveRetrieval so retrieval stages
// are measured and joined to their request's log line. It is safe for concurrent
// use; the zero value with Metrics set works.
//
// Every attempt sent upstream counts once in ragproxy_upstream_requests_total,
// under the upstream it went to and its own outcome. A failover, counted in
// ragproxy_failovers_total and logged as "failover":true, is a request that
// was sent to the fallback upstream (see Event.Failover), whether or not the
// fallback answered; the log's "upstream" names the upstream that answered
// and is absent when none did.
type MetricsObserver struct {
	// Metrics receives the measurements. Required.
	Metrics *observability.Metrics
	// Logger receives one line per request; nil logs nothing.
	Logger *slog.Logger
	// Provider is the gen_ai.provider.name of the upstreams. Default "openai".
	Provider string

	reqs sync.Map // request id -> *requestTrace
}

var (
	_ Observer        = (*MetricsObserver)(nil)
	_ RequestObserver = (*MetricsObserver)(nil)
)

// requestTrace is what the observer keeps about one chat request until its
// EventEnd.
type requestTrace struct {
	mu       sync.Mutex
	rec      *observability.StreamRecorder
	opened   bool // the upstream answered (EventUpstream without error)
	upstream time.Duration
	ttft     time.Duration
	in, out  int
	stages   []observability.StageTiming
}

// Observe implements Observer.
func (o *MetricsObserver) Observe(ctx context.Context, ev Event) {
	m := o.Metrics
	switch ev.Kind {
	case EventStart:
		t := &requestTrace{}
		if ev.Stream {
			t.rec = m.StartStream(ev.Model, time.Now().Add(-ev.Elapsed))
		}
		o.reqs.Store(ev.RequestID, t)
		return
	}
	v, ok := o.reqs.Load(ev.RequestID)
	if !ok {
		return
	}
	t := v.(*requestTrace)
	t.mu.Lock()
	defer t.mu.Unlock()
	switch ev.Kind {
	case EventUpstream:
		o.upstreamCalls(ev)
		t.upstream = ev.Elapsed - ev.Prepared
		t.opened = ev.Err == nil
		if !ev.Stream || ev.Err != nil {
			// A stream's operation lasts to its last byte; it is recorded at
			// EventEnd.
			m.Operation(ev.Model, o.provider(), errorType(ev.Err), t.upstream)
		}
	case EventFirstToken:
		t.ttft = ev.Elapsed
		if t.rec != nil {
			t.rec.Content()
		}
	case EventUsage:
		t.in, t.out = ev.Usage.PromptTokens, ev.Usage.CompletionTokens
		if t.rec != nil {
			t.rec.Usage(t.in, t.out)
		} else {
			m.Tokens(ev.Model, t.in, t.out)
		}
	case EventEnd:
		o.reqs.Delete(ev.RequestID)
		o.end(ctx, t, ev)
	}
}

func (o *MetricsObserver) end(ctx context.Context, t *requestTrace, ev Event) {
	m := o.Metrics
	if t.rec != nil {
		if ev.ClientGone {
			t.rec.Disconnected()
		}
		t.rec.End()
	}
	// Time in the proxy: everything but the upstream's part. A stream's
	// upstream part runs from the call to the last byte; a non-stream's
	// from the call to the answer.
	overhead := ev.Elapsed
	if t.opened {
		if ev.Stream {
			upstream := ev.Elapsed - ev.Prepared
			m.Operation(ev.Model, o.provider(), errorType(ev.Err), upstream)
			overhead = ev.Prepared
		} else {
			overhead -= t.upstream
		}
	}
	m.Overhead(overhead)
	if ev.Cache != "" {
		m.Cache("response", ev.Cache)
	}
	if o.Logger == nil {
		return
	}
	observability.LogRequest(ctx, o.Logger, observability.RequestLog{
		RequestID: ev.RequestID, Method: "POST", Route: routeChat, Model: ev.Model, Stream: ev.Stream,
		Task: ev.Task, Status: ev.Status, Duration: ev.Elapsed, TimeToFirstToken: t.ttft,
		InputTokens: t.in, OutputTokens: t.out, Retrieval: t.stages, Cache: ev.Cache,
		Upstream: ev.Upstream, Failover: ev.Failover(),
		ClientDisconnected: ev.ClientGone, Err: ev.Err,
	})
}

const routeChat = "/v1/chat/completions"

// upstreamCalls counts each attempt against the upstream it went to, with
// its own outcome, and the request as a failover when the fallback was tried.
func (o *MetricsObserver) upstreamCalls(ev Event) {
	m := o.Metrics
	for _, a := range ev.Attempts {
		m.Upstream(a.Upstream, string(a.Outcome))
	}
	if ev.Failover() {
		m.Failover()
	}
}

// ObserveRequest implements RequestObserver: it counts every request and
// logs those that are not chat requests (chat requests are logged at their
// EventEnd, with their timings). Successful probes and scrapes are not
// logged, so they do not drown the log.
func (o *MetricsObserver) ObserveRequest(ctx context.Context, info RequestInfo) {
	o.Metrics.ObserveRequest(info.Route, info.Status, info.Stream, taskLabel(info.Task))
	if o.Logger == nil || info.Chat {
		return
	}
	if info.Status < 400 && (info.Route == "/metrics" || info.Route == "/healthz" || info.Route == "/readyz") {
		return
	}
	observability.LogRequest(ctx, o.Logger, observability.RequestLog{RequestID: info.RequestID, Method: info.Method,
		Route: info.Route, Stream: info.Stream, Task: info.Task, Status: info.Status, Duration: info.Elapsed})
}

// Retrieval is what a Grounder reports of one retrieval.
type Retrieval struct {
	// Stages are the stages' times in the order they ran, named as the
	// Grounder names them (its names are the metrics' Config.Stages).
	Stages []observability.StageTiming
	// Confidence is the best similarity found; Empty reports that nothing
	// was above the confidence floor.
	Confidence float64
	Empty      bool
	// Degraded, when set, says why the retrieval had no query vectors (its reason: "embed-timeout",
	// "embed-error"), counted in ragproxy_retrieval_degraded_total.
	Degraded string
}

// ObserveRetrieval records a retrieval's stage durations, confidence and
// emptiness, and keeps the stage timings for the log line of the request ctx
// belongs to.
func (o *MetricsObserver) ObserveRetrieval(ctx context.Context, res Retrieval) {
	m := o.Metrics
	for _, st := range res.Stages {
		m.RetrievalStage(st.Stage, st.Duration)
	}
	m.RetrievalConfidence(res.Confidence)
	if res.Empty {
		m.RetrievalEmpty()
	}
	if res.Degraded != "" {
		m.RetrievalDegraded(res.Degraded)
	}
	if v, ok := o.reqs.Load(RequestID(ctx)); ok {
		t := v.(*requestTrace)
		t.mu.Lock()
		t.stages = slices.Clone(res.Stages)
		t.mu.Unlock()
	}
}

func (o *MetricsObserver) provider() string {
	if o.Provider == "" {
		return "openai"
	}
	return o.Provider
}

// taskLabel maps a TaskKind to its metrics label: the task kinds are Open WebUI's own task names, which
// observability keeps as label values; a question or a bypass is a user's turn ("chat").
func taskLabel(task string) string {
	switch task {
	case "", TaskBypass:
		return ""
	case TaskOther:
		return observability.Other
	}
	return task
}

// errorType is the OpenTelemetry error.type of a failed upstream operation:
// "canceled" for a request the client or a drain ended, else
// upstream.ErrorType ("timeout", "connection", the HTTP status, "_OTHER").
func errorType(err error) string {
	if errors.Is(err, errClientGone) || errors.Is(err, errCutOff) {
		return "canceled"
	}
	return upstream.ErrorType(err)
}
