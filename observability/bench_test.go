package observability

import (
	"testing"
	"time"
)

// BenchmarkRequestPath measures the metric calls one streamed chat request
// makes on the hot path.
func BenchmarkRequestPath(b *testing.B) {
	m, err := New(Config{Models: []string{"gpt-4o-mini"}, Tasks: testTasks(), Stages: testStages(), NoRuntimeMetrics: true})
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	b.ReportAllocs()
	for b.Loop() {
		rec := m.StartStream("gpt-4o-mini", start)
		for _, stage := range []string{"analysis", "pages", "communities", "chunks", "context"} {
			m.RetrievalStage(stage, time.Millisecond)
		}
		m.Cache("response", "miss")
		m.Upstream("primary", "success")
		rec.Content()
		rec.Usage(1000, 200)
		rec.End()
		m.Operation("gpt-4o-mini", "openai", "", time.Second)
		m.Overhead(time.Millisecond)
		m.ObserveRequest("/v1/chat/completions", 200, true, "")
	}
}
