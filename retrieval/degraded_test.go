package retrieval_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/ragproxy/ragproxy/compat/openaitest"
	"github.com/ragproxy/ragproxy/embedding"
	"github.com/ragproxy/ragproxy/examples"
	"github.com/ragproxy/ragproxy/ingest"
	"github.com/ragproxy/ragproxy/internal/indextest"
	"github.com/ragproxy/ragproxy/retrieval"
	"github.com/ragproxy/ragproxy/tokenizer"
)

const degradedQuestion = "how much is tuition for international students?"

// hangingEmbedder stands for an upstream that never answers: Embed returns when its context ends, after
// recording the deadline it was given.
type hangingEmbedder struct {
	name string
	// wait is how long the context given to Embed had left when Embed began.
	wait chan time.Duration
}

func (e hangingEmbedder) Embed(ctx context.Context, _ []string) ([][]float32, error) {
	d, ok := ctx.Deadline()
	if !ok {
		return nil, errors.New("no deadline")
	}
	e.wait <- time.Until(d)
	<-ctx.Done()
	return nil, ctx.Err()
}
func (e hangingEmbedder) Dimension() int { return 0 }
func (e hangingEmbedder) Name() string   { return e.name }

// TestEmbedBudget checks that a query embedding that does not answer is given up at Config.EmbedTimeout, from
// the deadline the embedder is handed (the clock is not measured), and the question answered from the lexical
// lists; that a client gone is still an error; and that the timings keep the embed stage.
func TestEmbedBudget(t *testing.T) {
	base, _ := indextest.Example(t)
	const budget = 200 * time.Millisecond
	h := hangingEmbedder{name: base.Index().Manifest.Embedder, wait: make(chan time.Duration, 1)}
	r, err := base.WithConfig(retrieval.Config{EmbedTimeout: budget}).WithEmbedder(h)
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.Retrieve(context.Background(), degradedQuestion, nil)
	if err != nil {
		t.Fatalf("retrieve: %v", err)
	}
	if w := <-h.wait; w > budget {
		t.Errorf("embedder given %v, want at most %v", w, budget)
	}
	if res.Degraded != retrieval.DegradedEmbedTimeout || !errors.Is(res.DegradedCause, context.DeadlineExceeded) {
		t.Errorf("degraded %q (%v), want %q", res.Degraded, res.DegradedCause, retrieval.DegradedEmbedTimeout)
	}
	checkAnswered(t, res)
	if _, ok := res.Durations[retrieval.StageEmbed]; !ok {
		t.Errorf("timings %v lack %q", res.Durations, retrieval.StageEmbed)
	}

	// A client that left is not answered.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := r.Retrieve(ctx, degradedQuestion, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled request: %v, want context.Canceled", err)
	}
}

// TestDegradedAgainstOpenAI serves an index built with OpenAI embeddings (the stand-in's) and then fails the
// query embeddings as OpenAI does: the key's quota runs out, 5xx, a 429 whose Retry-After is ten minutes away,
// a hang. Every question is answered from the lexical lists. serve's embedder makes one request per question
// and a hang ends at the budget; an embedder that retries does not wait out the Retry-After (the fake sees one
// request), and its retries of a 5xx end at the budget.
func TestDegradedAgainstOpenAI(t *testing.T) {
	fake := openaitest.NewServer(openaitest.Config{})
	defer fake.Close()
	tok, err := tokenizer.New()
	if err != nil {
		t.Fatal(err)
	}
	emb := func(retries int) *embedding.OpenAI {
		return embedding.NewOpenAI(embedding.OpenAIConfig{BaseURL: fake.URL(), APIKey: "sk-test", Model: "text-embedding-3-small",
			MaxRetries: retries})
	}
	dir := t.TempDir()
	if _, err := ingest.Run(context.Background(), ingest.Config{Source: indextest.ExampleSite(t), BaseURL: examples.BaseURL,
		IndexDir: dir, Embedder: emb(0), Logger: slog.New(slog.DiscardHandler)}); err != nil {
		t.Fatal(err)
	}
	const budget = 300 * time.Millisecond
	// serve's query embedder does not retry (cmd/ragproxy); one that does is still bounded by the budget.
	serving, err := retrieval.Open(dir, emb(-1), tok, retrieval.Config{EmbedTimeout: budget})
	if err != nil {
		t.Fatal(err)
	}
	retrying, err := serving.WithEmbedder(emb(4))
	if err != nil {
		t.Fatal(err)
	}
	quota := `{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`
	for _, tc := range []struct {
		name     string
		r        *retrieval.Retriever
		fault    openaitest.Fault
		reason   string
		requests int // embeddings requests the question makes; 0: not counted (retries within the budget)
	}{
		{"quota", serving, openaitest.Fault{Status: http.StatusTooManyRequests, Body: quota}, retrieval.DegradedEmbedError, 1},
		{"5xx", serving, openaitest.Fault{Status: http.StatusInternalServerError}, retrieval.DegradedEmbedError, 1},
		{"hang", serving, openaitest.Fault{Hang: true}, retrieval.DegradedEmbedTimeout, 1},
		// An embedder that retries waits for the reset (ingest's pacing), and the budget ends the wait: one request.
		{"retry-after, retrying", retrying, openaitest.Fault{Status: http.StatusTooManyRequests, RetryAfter: "600"}, retrieval.DegradedEmbedTimeout, 1},
		// Retries back off 0.5 s, 1 s, ...: the budget ends them.
		{"5xx, retrying", retrying, openaitest.Fault{Status: http.StatusInternalServerError}, retrieval.DegradedEmbedTimeout, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake.FailEmbeddingsAlways(&tc.fault)
			defer fake.FailEmbeddingsAlways(nil)
			n := len(fake.Requests())
			res, err := tc.r.Retrieve(context.Background(), degradedQuestion, nil)
			if err != nil {
				t.Fatalf("retrieve: %v", err)
			}
			if res.Degraded != tc.reason {
				t.Errorf("degraded %q (%v), want %q", res.Degraded, res.DegradedCause, tc.reason)
			}
			checkAnswered(t, res)
			if got := len(fake.Requests()) - n; tc.requests > 0 && got != tc.requests {
				t.Errorf("%d embeddings requests, want %d", got, tc.requests)
			}
		})
	}
	// With the upstream back, the dense lists are used again.
	res, err := serving.Retrieve(context.Background(), degradedQuestion, nil)
	if err != nil || res.Degraded != "" {
		t.Errorf("recovered: degraded %q, err %v", res.Degraded, err)
	}
}

// checkAnswered checks that a retrieval for degradedQuestion found its pages: not empty, with the tuition page
// among the first three.
func checkAnswered(t *testing.T, res *retrieval.Result) {
	t.Helper()
	var urls []string
	for _, p := range res.Pages {
		urls = append(urls, p.URL)
	}
	if res.Empty || !slices.Contains(urls[:min(3, len(urls))], examples.BaseURL+"tuition/") {
		t.Errorf("empty %v (confidence %.2f), pages %v: want the tuition page in the first three", res.Empty, res.Confidence, urls)
	}
}
