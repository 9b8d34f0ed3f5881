package retrieval_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/ragproxy/ragproxy/examples"
	"github.com/ragproxy/ragproxy/internal/indextest"
	"github.com/ragproxy/ragproxy/retrieval"
)

// TestContextProperties checks, for every example question, that the context fits its budget, reports its size
// within a few tokens of counting it whole, and holds each passage once.
func TestContextProperties(t *testing.T) {
	r, tok := indextest.Example(t)
	sc := bufio.NewScanner(bytes.NewReader(examples.Questions))
	n := 0
	for sc.Scan() {
		var q struct{ Question string }
		if err := json.Unmarshal(sc.Bytes(), &q); err != nil {
			t.Fatal(err)
		}
		a, _ := retrieval.Heuristic{}.Analyze(context.Background(), []retrieval.Message{{Role: "user", Content: q.Question}})
		res, err := r.Retrieve(context.Background(), q.Question, a.Rewrites)
		if err != nil {
			t.Fatal(err)
		}
		n++
		exact := tok.Count(res.Context)
		if d := res.ContextTokens - exact; d < -8 || d > 8 || exact > r.Config().ContextTokens {
			t.Errorf("%q: context_tokens %d, counted whole %d (budget %d)", q.Question, res.ContextTokens, exact, r.Config().ContextTokens)
		}
		seen := map[string]bool{}
		for _, c := range res.Chunks {
			text := strings.TrimSpace(c.Text)
			if seen[text] {
				t.Errorf("%q: passage twice in the context: %.60q", q.Question, text)
			}
			seen[text] = true
		}
		if len(res.Pages) == 0 || len(res.Chunks) == 0 {
			t.Errorf("%q: nothing retrieved", q.Question)
		}
	}
	if n == 0 {
		t.Fatal("no example questions")
	}
}
