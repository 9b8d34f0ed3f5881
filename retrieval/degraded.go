package retrieval

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/ragproxy/ragproxy/embedding"
)

// A question whose query embeddings fail (the upstream's quota ran out, a 5xx, a 429 whose Retry-After is minutes
// away) or do not arrive within Config.EmbedTimeout is still answered: from the lexical lists alone (page,
// chunk and title BM25, title match, definitions), the dense lists skipped, and with a lexical confidence instead
// of the cosine one. The index that answers it is loaded; only the query's vectors are missing.

// DefaultLexicalConfidenceFloor is Config.LexicalConfidenceFloor's default: the share of the question's terms
// (stopwords aside) that one passage of the context must hold together. Like the cosine floor it only catches
// questions that share almost nothing with the site: measured with the dense lists off, the best passage of every
// dev question holds 0.33 to 1 of its terms (example site, lowest 0.33, median 0.75; Berkeley 0.40, 0.71; ASF
// Infrastructure 0.42, 0.57), so a floor of 0.25 keeps all of them; questions from other fields ("recipe for
// banana bread", "who painted the mona lisa") hold 0 to 0.67 and 1 to 6 of 8 fall below it, where the cosine
// floor lets all 8 through (cosines 0.12 to 0.24). A floor of 0.5 would make 2 to 4 dev questions per site
// "I don't know". See eval's TestDegradedQuality.
const DefaultLexicalConfidenceFloor = 0.25

// Degradation reasons, the values of Result.Degraded.
const (
	// DegradedEmbedTimeout is a query embedding that did not arrive within Config.EmbedTimeout.
	DegradedEmbedTimeout = "embed-timeout"
	// DegradedEmbedError is a query embedding that failed (an upstream error, a malformed response).
	DegradedEmbedError = "embed-error"
)

// embedQueries embeds the queries within Config.EmbedTimeout. It returns the vectors, or, when the embedder
// failed or ran out of time, one nil vector per query, the reason and the embedder's error. fatal is set only
// when ctx itself ended (the client left): then there is no one to answer. The deadline also bounds the embedder's retries: an SDK that
// waits out a Retry-After gives up when the context ends, so a question never waits longer than the budget.
func (r *Retriever) embedQueries(ctx context.Context, queries []string) (vecs [][]float32, degraded string, cause, fatal error) {
	ectx := ctx
	if d := r.cfg.EmbedTimeout; d > 0 {
		var cancel context.CancelFunc
		ectx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
	}
	vecs, err := r.emb.Embed(ectx, queries)
	switch {
	case err == nil && len(vecs) == len(queries):
		return vecs, "", nil, nil
	case ctx.Err() != nil:
		return nil, "", nil, fmt.Errorf("retrieve: embed query: %w", ctx.Err())
	case err == nil:
		err = fmt.Errorf("%d vectors for %d queries", len(vecs), len(queries))
	}
	reason := DegradedEmbedError
	if errors.Is(err, context.DeadlineExceeded) || ectx.Err() != nil {
		reason = DegradedEmbedTimeout
	}
	return make([][]float32, len(queries)), reason, err, nil
}

// lexicalOnly is the retriever for a question without query vectors: the configured page lists without the
// dense ones (the BM25 lists when nothing else is left) and chunks fused from BM25 alone.
func (r *Retriever) lexicalOnly() *Retriever {
	cfg := r.cfg
	cfg.PageLists = slices.DeleteFunc(slices.Clone(cfg.PageLists), func(l string) bool {
		return l == ListSummaryDense || l == ListChunkDense
	})
	if len(cfg.PageLists) == 0 {
		cfg.PageLists = []string{ListPageBM25, ListChunkBM25, ListTitleBM25}
	}
	cfg.ChunkDenseWeight = -1 // none
	return r.WithConfig(cfg)
}

// lexicalConfidence is the confidence of a retrieval without query vectors: the largest share of the question's
// terms that one window of a context passage holds (passageQuery.coverage), 0 to 1. Cosine similarities need the
// query's vector; this needs only the words, and it is what passage reranking already measures.
func (r *Retriever) lexicalConfidence(question string, res *Result) float64 {
	q := r.passageQuery(r.qlang, question)
	if q.n == 0 {
		return 0
	}
	best := 0.0
	for _, c := range res.Chunks {
		_, qc := q.coverage(c.Text)
		best = max(best, qc)
	}
	return best
}

// WithEmbedder returns a retriever over the same index and search structures that embeds queries with e, which
// must be the embedder the index was built with (the same name and dimension), or ErrEmbedderMismatch: serve's
// query embedder, or a test's stand-in for a failing upstream.
func (r *Retriever) WithEmbedder(e embedding.Embedder) (*Retriever, error) {
	if err := checkEmbedder(r.ix, e); err != nil {
		return nil, err
	}
	c := *r
	c.emb = e
	return &c, nil
}
