package grounding

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ragproxy/ragproxy/cache"
	"github.com/ragproxy/ragproxy/retrieval"
)

// countingAnalyzer answers like a model, or like the heuristic fallback when
// the question contains "fallback", and counts its calls.
type countingAnalyzer struct {
	mu    sync.Mutex
	calls int
}

func (c *countingAnalyzer) Analyze(_ context.Context, msgs []retrieval.Message) (retrieval.Analysis, error) {
	c.mu.Lock()
	c.calls++
	c.mu.Unlock()
	q := msgs[len(msgs)-1].Content
	src := "llm"
	if strings.Contains(q, "fallback") {
		src = "heuristic"
	}
	return retrieval.Analysis{Question: q, NeedsRetrieval: true, Rewrites: []string{q + " rewritten"}, Source: src}, nil
}

func conversation(first string, n int, last string) []retrieval.Message {
	msgs := []retrieval.Message{{Role: "user", Content: first}}
	for i := 1; i < n-1; i++ {
		role := "assistant"
		if i%2 == 0 {
			role = "user"
		}
		msgs = append(msgs, retrieval.Message{Role: role, Content: "turn"})
	}
	return append(msgs, retrieval.Message{Role: "user", Content: last})
}

func TestCachedAnalyzer(t *testing.T) {
	tests := []struct {
		name      string
		model2    string
		first     []retrieval.Message
		second    []retrieval.Message
		wantCalls int
		wantHits  []string
	}{
		{"repeat is a hit", "m", conversation("a", 3, "when is enrolment?"), conversation("a", 3, "when is enrolment?"), 1, []string{"miss", "hit"}},
		{"other question misses", "m", conversation("a", 3, "when is enrolment?"), conversation("a", 3, "what are the fees?"), 2, []string{"miss", "miss"}},
		{"other model misses", "m2", conversation("a", 3, "when is enrolment?"), conversation("a", 3, "when is enrolment?"), 2, []string{"miss", "miss"}},
		{"messages beyond the window do not count", "m", conversation("a", 14, "and for grad students?"), conversation("b", 14, "and for grad students?"), 1, []string{"miss", "hit"}},
		{"heuristic fallback is not kept", "m", conversation("a", 1, "fallback question"), conversation("a", 1, "fallback question"), 2, []string{"miss", "miss"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			lru, err := cache.NewLRU(cache.LRUConfig{})
			if err != nil {
				t.Fatal(err)
			}
			inner := &countingAnalyzer{}
			var results []string
			record := func(r string) { results = append(results, r) }
			a1 := NewCachedAnalyzer(inner, lru, "m", 0)
			a1.OnLookup = record
			a2 := NewCachedAnalyzer(inner, lru, tc.model2, 0)
			a2.OnLookup = record
			got1, err := a1.Analyze(context.Background(), tc.first)
			if err != nil {
				t.Fatal(err)
			}
			got2, err := a2.Analyze(context.Background(), tc.second)
			if err != nil {
				t.Fatal(err)
			}
			want2, _ := (&countingAnalyzer{}).Analyze(context.Background(), tc.second)
			if diff := cmp.Diff(want2, got2); diff != "" {
				t.Errorf("second analysis (-want +got):\n%s", diff)
			}
			if got1.Question != tc.first[len(tc.first)-1].Content {
				t.Errorf("first question = %q", got1.Question)
			}
			if inner.calls != tc.wantCalls {
				t.Errorf("analyzer calls = %d, want %d", inner.calls, tc.wantCalls)
			}
			if diff := cmp.Diff(tc.wantHits, results); diff != "" {
				t.Errorf("lookups (-want +got):\n%s", diff)
			}
		})
	}
}
