package eval_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/ragproxy/ragproxy/embedding"
	"github.com/ragproxy/ragproxy/eval"
	"github.com/ragproxy/ragproxy/examples"
	"github.com/ragproxy/ragproxy/internal/corpustest"
	"github.com/ragproxy/ragproxy/internal/indextest"
	"github.com/ragproxy/ragproxy/retrieval"
)

// refusingEmbedder stands for a query embedder whose upstream refuses every call (a key out of quota): it has the
// index's embedder's name and dimension, so the retriever takes it, and fails every Embed.
type refusingEmbedder struct{ name string }

func (e refusingEmbedder) Embed(context.Context, []string) ([][]float32, error) {
	return nil, errors.New("429 insufficient_quota")
}
func (e refusingEmbedder) Dimension() int { return 0 }
func (e refusingEmbedder) Name() string   { return e.name }

var _ embedding.Embedder = refusingEmbedder{}

// offTopic are questions from other fields than any indexed site's.
var offTopic = []string{
	"who won the football world cup in 2014",
	"recipe for banana bread",
	"what is the capital of australia",
	"how tall is mount everest",
	"best pizza toppings",
	"lyrics of bohemian rhapsody",
	"how many moons does jupiter have",
	"who painted the mona lisa",
}

// TestDegradedQuality measures retrieval when every query embedding fails (serve's degraded mode: the lexical
// lists alone, the lexical confidence): the dev questions' quality, that the lexical confidence floor keeps
// nearly all of them, and that it makes off-topic questions empty at least as often as the cosine floor does. The example site always runs; the Berkeley and ASF Infrastructure
// sites when their corpora are set.
func TestDegradedQuality(t *testing.T) {
	type site struct {
		name, dir, base string
		questions       func(t *testing.T) []eval.Question
	}
	sites := []site{{"example", "", examples.BaseURL, func(t *testing.T) []eval.Question {
		path := filepath.Join(t.TempDir(), "questions.jsonl")
		if err := os.WriteFile(path, examples.Questions, 0o644); err != nil {
			t.Fatal(err)
		}
		qs, err := eval.LoadQuestions(path)
		if err != nil {
			t.Fatal(err)
		}
		return qs
	}}}
	if os.Getenv("RAGPROXY_TEST_CORPUS") != "" && os.Getenv("RAGPROXY_TEST_EVAL") != "" {
		sites = append(sites, site{"berkeley", os.Getenv("RAGPROXY_TEST_CORPUS"), corpustest.BaseURL, func(t *testing.T) []eval.Question {
			qs, err := eval.LoadQuestions(corpustest.QuestionsPath(t))
			if err != nil {
				t.Fatal(err)
			}
			return qs
		}})
	}
	if c, q := os.Getenv("RAGPROXY_TEST_CORPUS_ASF"), os.Getenv("RAGPROXY_TEST_EVAL_ASF"); c != "" && q != "" {
		sites = append(sites, site{"asf", c, asfBaseURL, func(t *testing.T) []eval.Question {
			qs, err := eval.LoadQuestions(q)
			if err != nil {
				t.Fatal(err)
			}
			return qs
		}})
	}
	for _, s := range sites {
		t.Run(s.name, func(t *testing.T) {
			dir := s.dir
			if dir == "" {
				dir = indextest.ExampleSite(t)
			}
			idx := t.TempDir()
			indextest.Build(t, dir, s.base, idx)
			full, _ := indextest.Open(t, idx)
			r, err := full.WithEmbedder(refusingEmbedder{full.Index().Manifest.Embedder})
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			qs := s.questions(t)
			m, err := eval.Retrieve(ctx, r, retrieval.Heuristic{}, qs)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("dense lists off, %d questions: fact-in-context %.3f, Hit@1 %.3f, Hit@8 %.3f, MRR %.3f",
				m.Questions, m.FactInContext, m.Hit[1], m.Hit[8], m.MRR)
			var answered []float64
			empty := 0
			for _, q := range qs {
				res := retrieveDegraded(t, ctx, r, q.Question)
				answered = append(answered, res.Confidence)
				if res.Empty {
					empty++
					t.Logf("empty: %q (confidence %.2f)", q.Question, res.Confidence)
				}
			}
			slices.Sort(answered)
			t.Logf("dev confidences: min %.2f, median %.2f; %d of %d empty", answered[0], answered[len(answered)/2], empty, len(qs))
			// Nearly every question the site answers must pass the floor: at most one in ten may not.
			if empty*10 > len(qs) {
				t.Errorf("%d of %d dev questions empty without vectors", empty, len(qs))
			}
			emptyLex, emptyDense := 0, 0
			for _, q := range offTopic {
				res := retrieveDegraded(t, ctx, r, q)
				a, _ := retrieval.Heuristic{}.Analyze(ctx, []retrieval.Message{{Role: "user", Content: q}})
				withVecs, err := full.Retrieve(ctx, q, a.Rewrites)
				if err != nil {
					t.Fatal(err)
				}
				t.Logf("off-topic %q: confidence %.2f (empty %v); with vectors %.2f (empty %v)", q, res.Confidence, res.Empty, withVecs.Confidence, withVecs.Empty)
				if res.Empty {
					emptyLex++
				}
				if withVecs.Empty {
					emptyDense++
				}
			}
			// The lexical floor must catch at least what the cosine floor does: without vectors, a question is not
			// answered from passages that share less with it than with vectors.
			if emptyLex < emptyDense {
				t.Errorf("off-topic questions empty: %d without vectors, %d with", emptyLex, emptyDense)
			}
		})
	}
}

func retrieveDegraded(t *testing.T, ctx context.Context, r *retrieval.Retriever, question string) *retrieval.Result {
	t.Helper()
	a, err := retrieval.Heuristic{}.Analyze(ctx, []retrieval.Message{{Role: "user", Content: question}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.Retrieve(ctx, question, a.Rewrites)
	if err != nil {
		t.Fatal(err)
	}
	if res.Degraded != retrieval.DegradedEmbedError {
		t.Fatalf("%q: degraded %q, want %q", question, res.Degraded, retrieval.DegradedEmbedError)
	}
	return res
}
