package observability

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// feedSynthetic drives every typed method once per round, so every series the
// dashboard reads has data. round varies the values so rates and quantiles
// move between scrapes.
func feedSynthetic(m *Metrics, round int) {
	r := time.Duration(round%7+1) * time.Millisecond
	routes := []string{"/v1/chat/completions", "/v1/models", "/v1/retrieve", "/healthz"}
	codes := []int{200, 200, 200, 400, 401, 429, 500, 502}
	for i, code := range codes {
		m.ObserveRequest(routes[i%len(routes)], code, i%2 == 0, []string{"", "title_generation", "tags_generation"}[i%3])
	}
	for _, model := range []string{"gpt-4o-mini", "unlisted-model"} {
		rec := m.StartStream(model, time.Now().Add(-400*time.Millisecond-20*r))
		rec.Content()
		rec.Usage(800+round, 120+round)
		if round%3 == 0 {
			rec.Disconnected()
		}
		rec.End()
		m.Operation(model, "openai", "", 900*time.Millisecond+50*r)
		m.Tokens(model, 1200+round, 300+round)
	}
	m.Operation("gpt-4o-mini", "openai", "429", 80*time.Millisecond)
	m.Operation("gpt-4o-mini", "azure.ai.openai", "timeout", 30*time.Second)
	for _, stage := range []string{"analysis", "embed", "pages", "communities", "chunks", "context"} {
		m.RetrievalStage(stage, 2*r)
	}
	m.RetrievalConfidence(float64(round%10) / 10)
	m.RetrievalEmpty()
	for _, cache := range []string{"response", "retrieval", "analysis", "embedding"} {
		m.Cache(cache, "hit")
		m.Cache(cache, "miss")
	}
	m.Cache("response", "error")
	m.Upstream("primary", "success")
	m.Upstream("primary", "rate_limited")
	m.Upstream("secondary", "success")
	m.Failover()
	m.Overhead(3 * r)
	m.SetIndexInfo("berkeley-guide", "2016-17", "local", 780, 6000+round)
	m.IndexReload("switched")
	m.IndexReload("unchanged")
	m.FAQAnswer("direct")
	m.FAQAnswer("evidence")
	m.SetIndexBuilt("berkeley-guide", time.Now())
	m.BackendUp("qdrant", true)
	m.BackendUp("redis", round%2 == 0)
}

// scrape returns the body h serves for GET /metrics.
func scrape(t *testing.T, h http.Handler) string {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	res := rec.Result()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("read /metrics: %v", err)
	}
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: status %d: %s", res.StatusCode, body)
	}
	return string(body)
}
