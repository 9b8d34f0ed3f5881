package observability

import (
	"sync"
	"time"
)

// StreamRecorder records one streamed chat completion from inside the SSE
// writer. Middleware sees only the time to response headers, which for a
// stream says nothing about the answer, so the writer itself reports the
// moments that matter:
//
//	rec := m.StartStream(model, requestStart) // ragproxy_inflight_streams +1
//	defer rec.End()                           // always runs: gauge -1, duration, tokens
//	for each chunk written and flushed to the client {
//		if it carried content { rec.Content() } // the first call records time to first token
//		if the write failed   { rec.Disconnected(); return }
//	}
//	rec.Usage(in, out) // from the upstream's final usage chunk, or counted
//
// End is idempotent and must be deferred, so the in-flight gauge returns to
// zero whether the stream finishes, fails upstream, or the client goes away.
// A StreamRecorder is safe for concurrent use.
type StreamRecorder struct {
	m     *Metrics
	model string // raw name; bounded when recorded
	start time.Time

	mu           sync.Mutex
	first        time.Time
	in, out      int
	disconnected bool
	ended        bool
	stats        StreamStats
}

// StreamStats is what a StreamRecorder measured, for the request's log line.
type StreamStats struct {
	// TimeToFirstToken is zero when no content was written.
	TimeToFirstToken time.Duration
	// Duration runs from the request start to End.
	Duration     time.Duration
	InputTokens  int
	OutputTokens int
	// Disconnected is true when the client abandoned the stream.
	Disconnected bool
}

// StartStream begins recording a stream of model's answer. start is when the
// request arrived, so time to first token includes retrieval, as the client
// experiences it. It adds one to ragproxy_inflight_streams; call End.
func (m *Metrics) StartStream(model string, start time.Time) *StreamRecorder {
	m.StreamStarted()
	return &StreamRecorder{m: m, model: model, start: start}
}

// Content notes that a chunk carrying answer content was written to the
// client. The first call records the time to first token; later calls do
// nothing.
func (r *StreamRecorder) Content() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ended || !r.first.IsZero() {
		return
	}
	r.first = r.m.now()
	r.m.FirstToken(r.model, r.first.Sub(r.start))
}

// Usage sets the stream's token counts (the last call wins), recorded at End.
func (r *StreamRecorder) Usage(in, out int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.in, r.out = in, out
}

// Disconnected notes that the client went away; it is counted once, at End.
func (r *StreamRecorder) Disconnected() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.disconnected = true
}

// End finishes the stream: it subtracts one from ragproxy_inflight_streams and
// records the stream duration, the tokens and a disconnect if there was one.
// Only the first call has an effect; every call returns the same stats.
func (r *StreamRecorder) End() StreamStats {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ended {
		return r.stats
	}
	r.ended = true
	defer r.m.StreamEnded()

	end := r.m.now()
	r.stats = StreamStats{
		Duration:     end.Sub(r.start),
		InputTokens:  r.in,
		OutputTokens: r.out,
		Disconnected: r.disconnected,
	}
	if !r.first.IsZero() {
		r.stats.TimeToFirstToken = r.first.Sub(r.start)
	}
	r.m.streamDuration.WithLabelValues(r.m.Model(r.model)).Observe(seconds(r.stats.Duration))
	r.m.Tokens(r.model, r.in, r.out)
	if r.disconnected {
		r.m.ClientDisconnect()
	}
	return r.stats
}
