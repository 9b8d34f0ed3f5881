package grounding

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/ragproxy/ragproxy/compat"
	"github.com/ragproxy/ragproxy/retrieval"
	"github.com/ragproxy/ragproxy/server"
)

// quotaEmbedder stands for a query embedder whose key is out of quota: every Embed fails at once.
type quotaEmbedder struct{ name string }

func (e quotaEmbedder) Embed(context.Context, []string) ([][]float32, error) {
	return nil, errors.New("429 insufficient_quota")
}
func (e quotaEmbedder) Dimension() int { return 0 }
func (e quotaEmbedder) Name() string   { return e.name }

// TestServeWithEmbeddingsFailing checks the gateway with every query embedding failing: each question is still
// answered with its grounded context, streamed or not, and cited; /v1/retrieve says the retrieval was degraded and
// keeps its timings; OnRetrieval (the metrics) hears of each degraded retrieval; and the answers are kept out of
// the response cache.
func TestServeWithEmbeddingsFailing(t *testing.T) {
	base, tok := exampleIndex(t)
	r, err := base.WithEmbedder(quotaEmbedder{base.Index().Manifest.Embedder})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var degraded []string
	g := &Grounder{Retriever: r, Tokenizer: tok, OnRetrieval: func(_ context.Context, rep server.Retrieval) {
		mu.Lock()
		defer mu.Unlock()
		degraded = append(degraded, rep.Degraded)
	}}
	h := newHarness(t, server.Config{Grounder: g}, replying("In-state tuition is $4,850 ([Tuition]("+tuitionURL+"))."))
	questions := []string{"how much is in-state tuition per semester?", "when is the fall application deadline?", "where can I park on campus?"}
	for _, q := range questions {
		for _, stream := range []bool{false, true} {
			body := `{"model":"ragproxy","stream":` + map[bool]string{false: "false", true: "true"}[stream] +
				`,"messages":[{"role":"user","content":"` + q + `"}]}`
			resp, out := h.post(t, "/chat/completions", body)
			if resp.StatusCode != 200 {
				t.Fatalf("%q: status %d: %s", q, resp.StatusCode, out)
			}
			if got := readAnswer(t, out, stream); !strings.Contains(got.content, "**Sources**") {
				t.Errorf("%q stream %v: %q, want a cited answer", q, stream, got.content)
			}
		}
	}
	reqs := h.Fake.Requests()
	if len(reqs) != 2*len(questions) {
		t.Fatalf("upstream saw %d requests, want %d", len(reqs), 2*len(questions))
	}
	for _, req := range reqs {
		if !strings.Contains(req.Messages[0].Text(), "<context>") {
			t.Errorf("a question went upstream without context: %.200s", req.Messages[0].Text())
		}
	}
	resp, body := h.post(t, "/retrieve", `{"query":"how much is in-state tuition?"}`)
	var out retrieveResponse
	if err := json.Unmarshal([]byte(body), &out); err != nil || resp.StatusCode != 200 {
		t.Fatalf("status %d, %v: %s", resp.StatusCode, err, body)
	}
	if out.Degraded != retrieval.DegradedEmbedError || out.Empty || len(out.Pages) == 0 {
		t.Errorf("retrieve: degraded %q, empty %v, %d pages; want a degraded, answered retrieval", out.Degraded, out.Empty, len(out.Pages))
	}
	for _, stage := range retrieval.Stages() {
		if _, ok := out.Timings[stage]; !ok {
			t.Errorf("timings lack %q: %v", stage, out.Timings)
		}
	}
	// A degraded answer stays out of the response cache, online and offline.
	for _, offline := range []bool{false, true} {
		og := &Grounder{Retriever: r, Tokenizer: tok, Offline: offline}
		gr, err := og.Ground(context.Background(), &server.GroundRequest{Messages: []compat.Message{compat.TextMessage("user", questions[0])}})
		if err != nil || gr == nil || !gr.NoStore {
			t.Errorf("offline %v: grounding %+v (%v), want NoStore", offline, gr, err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(degraded) != 2*len(questions)+1 {
		t.Fatalf("%d retrievals reported, want %d", len(degraded), 2*len(questions)+1)
	}
	for i, d := range degraded {
		if d != retrieval.DegradedEmbedError {
			t.Errorf("retrieval %d reported degraded %q", i, d)
		}
	}
}
