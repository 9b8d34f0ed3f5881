package grounding

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ragproxy/ragproxy/compat/openaitest"
	"github.com/ragproxy/ragproxy/embedding"
	"github.com/ragproxy/ragproxy/retrieval"
	"github.com/ragproxy/ragproxy/server"
	"github.com/ragproxy/ragproxy/upstream"
)

// gateAnalyzer answers like a model with fixed rewrites, at once or, when hold is set, only once hold is closed
// or its context ends (then with the heuristic fallback, as retrieval.LLMAnalyzer does).
type gateAnalyzer struct {
	rewrites []string
	needs    bool
	hold     chan struct{}

	mu       sync.Mutex
	calls    int
	returned chan struct{} // closed when a call returns
}

func newGateAnalyzer(needs bool, rewrites ...string) *gateAnalyzer {
	return &gateAnalyzer{rewrites: rewrites, needs: needs, returned: make(chan struct{})}
}

func (g *gateAnalyzer) Analyze(ctx context.Context, msgs []retrieval.Message) (retrieval.Analysis, error) {
	g.mu.Lock()
	g.calls++
	g.mu.Unlock()
	defer close(g.returned)
	if g.hold != nil {
		select {
		case <-g.hold:
		case <-ctx.Done():
			return retrieval.Heuristic{}.Analyze(ctx, msgs)
		}
	}
	h, _ := retrieval.Heuristic{}.Analyze(ctx, msgs)
	return retrieval.Analysis{Question: h.Question, NeedsRetrieval: g.needs, Rewrites: g.rewrites, Source: "llm"}, nil
}

func (g *gateAnalyzer) called() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.calls
}

// followUp is a conversation whose latest question needs the earlier turn.
var followUp = []retrieval.Message{
	{Role: "user", Content: "how much is in-state tuition per semester?"},
	{Role: "assistant", Content: "In-state tuition is $4,850 per semester."},
	{Role: "user", Content: "and for out-of-state students?"},
}

// heuristicRewrites are the heuristic analysis's rewrites of msgs.
func heuristicRewrites(t *testing.T, msgs []retrieval.Message) []string {
	t.Helper()
	h, err := retrieval.Heuristic{}.Analyze(context.Background(), msgs)
	if err != nil {
		t.Fatal(err)
	}
	return h.Rewrites
}

// TestAnalysisFlow checks which analysis a search retrieves with: the heuristic one at once for a first-turn
// question that stands on its own (the model is not asked), the model's for a follow-up when it answers within
// the budget, and nothing when the model finds no retrieval needed.
func TestAnalysisFlow(t *testing.T) {
	r, tok := exampleIndex(t)
	model := []string{"out-of-state tuition per semester", "nonresident tuition cost", "tuition for out-of-state students"}
	standalone := []retrieval.Message{{Role: "user", Content: "how much is in-state tuition per semester?"}}
	for _, tc := range []struct {
		name         string
		msgs         []retrieval.Message
		needs        bool
		wantCalls    int
		wantRewrites []string // nil: no retrieval
	}{
		{"standalone first turn", standalone, true, 0, heuristicRewrites(t, standalone)},
		{"first turn that refers", []retrieval.Message{{Role: "user", Content: "how much does it cost?"}}, true, 1, model},
		{"first-turn greeting", []retrieval.Message{{Role: "user", Content: "hello there!"}}, false, 1, nil},
		{"follow-up", followUp, true, 1, model},
		{"follow-up needing no retrieval", followUp, false, 1, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			an := newGateAnalyzer(tc.needs, model...)
			g := &Grounder{Retriever: r, Tokenizer: tok, Analyzer: an}
			_, res, err := g.Search(context.Background(), tc.msgs)
			if err != nil {
				t.Fatal(err)
			}
			if n := an.called(); n != tc.wantCalls {
				t.Errorf("analyser called %d times, want %d", n, tc.wantCalls)
			}
			if tc.wantRewrites == nil {
				if res != nil {
					t.Errorf("retrieved %v, want no retrieval", res.Rewrites)
				}
				return
			}
			if res == nil || len(res.Rewrites) < len(tc.wantRewrites) || !slices.Equal(res.Rewrites[:len(tc.wantRewrites)], tc.wantRewrites) {
				t.Fatalf("retrieved with %v, want %v first", rewritesOf(res), tc.wantRewrites)
			}
			if _, ok := res.Durations[retrieval.StageAnalysis]; !ok {
				t.Errorf("no analysis time in %v", res.Durations)
			}
		})
	}
}

func rewritesOf(res *retrieval.Result) []string {
	if res == nil {
		return nil
	}
	return res.Rewrites
}

// TestLateAnalysis checks that an analysis that has not answered within the budget does not hold the search
// up: the retrieval on the heuristic analysis is used (a greeting gets none), and the analysis goes on until the
// request's context ends.
func TestLateAnalysis(t *testing.T) {
	r, tok := exampleIndex(t)
	thanks := append(slices.Clone(followUp[:2]), retrieval.Message{Role: "user", Content: "thanks a lot!"})
	for _, tc := range []struct {
		name         string
		msgs         []retrieval.Message
		wantRewrites []string
	}{
		{"follow-up", followUp, heuristicRewrites(t, followUp)},
		{"thanks", thanks, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			an := newGateAnalyzer(true, "never used")
			an.hold = make(chan struct{}) // never closed: the analysis answers only when the request ends
			g := &Grounder{Retriever: r, Tokenizer: tok, Analyzer: an, AnalysisBudget: time.Millisecond}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			_, res, err := g.Search(ctx, tc.msgs)
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case tc.wantRewrites == nil && res != nil:
				t.Errorf("retrieved %v, want no retrieval", res.Rewrites)
			case tc.wantRewrites != nil && (res == nil || !slices.Equal(res.Rewrites[:len(tc.wantRewrites)], tc.wantRewrites)):
				t.Errorf("retrieved with %v, want the heuristic rewrites %v first", rewritesOf(res), tc.wantRewrites)
			}
			select {
			case <-an.returned:
				t.Error("the analysis ended with the search; it should go on while the request lasts")
			default:
			}
			cancel()
			<-an.returned
		})
	}
}

// TestFAQDirectAnswerAsksNoModel checks that a question the FAQ answers directly makes no upstream call at all,
// not even the analysis of a follow-up.
func TestFAQDirectAnswerAsksNoModel(t *testing.T) {
	r, tok := exampleIndex(t)
	an := newGateAnalyzer(true, "fall 2024 classes start date")
	g := &Grounder{Retriever: r, Tokenizer: tok, FAQ: exampleFAQ(t), Analyzer: an}
	h := newHarness(t, server.Config{Grounder: g}, replying("an upstream answer"))
	body := `{"model":"ragproxy","messages":[{"role":"user","content":"hi, I have questions about the calendar"},` +
		`{"role":"assistant","content":"Sure, ask away."},{"role":"user","content":"When do fall 2024 classes begin"}]}`
	resp, out := h.post(t, "/chat/completions", body)
	if resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, out)
	}
	if n := an.called(); n != 0 {
		t.Errorf("the analyser was asked %d times for an FAQ answer, want 0", n)
	}
	if n := len(h.Fake.Requests()); n != 0 {
		t.Errorf("the upstream saw %d requests for an FAQ answer, want 0", n)
	}
}

// recordingEmbedder records the texts of each Embed call of the embedder it wraps.
type recordingEmbedder struct {
	embedding.Embedder
	mu    sync.Mutex
	calls [][]string
}

func (e *recordingEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	e.mu.Lock()
	e.calls = append(e.calls, slices.Clone(texts))
	e.mu.Unlock()
	return e.Embedder.Embed(ctx, texts)
}

// TestStreamedAnalysisEmbedsEarly checks a follow-up analysed by a model through the real client: the analysis is
// streamed, each rewrite is embedded on its own as soon as the model has written it (before the analysis ends),
// the retrieval uses the model's rewrites, and the question, searched with the heuristic rewrites and again with
// the model's, is embedded once.
func TestStreamedAnalysisEmbedsEarly(t *testing.T) {
	r, tok := exampleIndex(t)
	rec := &recordingEmbedder{Embedder: r.Embedder()}
	r, err := r.WithEmbedder(rec)
	if err != nil {
		t.Fatal(err)
	}
	model := []string{"out-of-state tuition per semester", "nonresident tuition cost", "tuition for out-of-state students"}
	fake := openaitest.NewServer(openaitest.Config{ChunkDelay: 5 * time.Millisecond, Reply: func(*openaitest.Request) openaitest.Reply {
		return openaitest.Reply{Content: `{"retrieval_needed": true, "rewrites": ["` + strings.Join(model, `", "`) + `"]}`}
	}})
	defer fake.Close()
	client, err := upstream.New(upstream.Config{Primary: upstream.Endpoint{BaseURL: fake.URL(), Model: "gpt-4o-mini"}})
	if err != nil {
		t.Fatal(err)
	}
	g := &Grounder{Retriever: r, Tokenizer: tok, AnalysisBudget: time.Minute,
		Analyzer: &retrieval.LLMAnalyzer{Ask: upstream.Asker{Client: client}.Ask}}
	a, res, err := g.Search(context.Background(), followUp)
	if err != nil {
		t.Fatal(err)
	}
	if res == nil || len(res.Rewrites) < 3 || !slices.Equal(res.Rewrites[:3], model) || a.Source != "llm" {
		t.Fatalf("retrieved with %v (analysis from %q), want the model's %v first", rewritesOf(res), a.Source, model)
	}
	if reqs := fake.Requests(); len(reqs) != 1 || !reqs[0].Stream || !reqs[0].IncludeUsage {
		t.Errorf("analysis requests %+v, want one streamed with its usage", reqs)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	alone, question := map[string]bool{}, 0
	for _, c := range rec.calls {
		if len(c) == 1 {
			alone[c[0]] = true
		}
		if slices.Contains(c, a.Query()) {
			question++
		}
	}
	for _, m := range model {
		if !alone[m] {
			t.Errorf("rewrite %q was not embedded on its own as it arrived; calls %q", m, rec.calls)
		}
	}
	if alone[a.Question] {
		t.Errorf("the follow-up %q was embedded on its own; it is searched for joined to its question", a.Question)
	}
	if question != 1 {
		// The query is the follow-up joined to its question, which the retrieval on the heuristics embedded.
		t.Errorf("the query %q was embedded %d times, want once; calls %q", a.Query(), question, rec.calls)
	}
}
