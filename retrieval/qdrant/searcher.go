package qdrant

import (
	"context"

	"github.com/ragproxy/ragproxy/index"
	"github.com/ragproxy/ragproxy/retrieval"
)

// Searcher runs retrieval's summary and chunk searches on a Store: each query's vector and its BM25 terms
// (BM25Query, matching the Store's default document encoder) in one hybrid query, fused inside Qdrant.
type Searcher struct {
	store *Store
}

var _ retrieval.VectorStore = (*Searcher)(nil)

// NewSearcher returns a Searcher over s's collections.
func NewSearcher(s *Store) *Searcher { return &Searcher{store: s} }

// SearchSummaries implements retrieval.VectorStore.
func (s *Searcher) SearchSummaries(ctx context.Context, q retrieval.VectorQuery, k int) ([]retrieval.VectorHit, error) {
	idx, val := BM25Query(q.Text)
	hits, err := s.store.SearchSummaries(ctx, q.Vector, idx, val, k)
	if err != nil {
		return nil, err
	}
	out := make([]retrieval.VectorHit, len(hits))
	for i, h := range hits {
		out[i] = retrieval.VectorHit{PageID: h.PageID, URL: h.URL}
	}
	return out, nil
}

// SearchChunks implements retrieval.VectorStore; nil pageIDs searches the whole chunks collection, where
// Store.SearchChunks would find nothing.
func (s *Searcher) SearchChunks(ctx context.Context, q retrieval.VectorQuery, pageIDs []int, k int) ([]retrieval.VectorHit, error) {
	idx, val := BM25Query(q.Text)
	var (
		hits []ChunkHit
		err  error
	)
	if pageIDs == nil {
		hits, err = s.store.searchChunks(ctx, q.Vector, idx, val, nil, k)
	} else {
		hits, err = s.store.SearchChunks(ctx, q.Vector, idx, val, pageIDs, k)
	}
	if err != nil {
		return nil, err
	}
	out := make([]retrieval.VectorHit, len(hits))
	for i, h := range hits {
		out[i] = retrieval.VectorHit{PageID: h.PageID, Ord: h.Ord, URL: h.URL}
	}
	return out, nil
}

// Verify reports how the collections the searcher reads differ from ix (see Store.Verify).
func (s *Searcher) Verify(ctx context.Context, ix *index.Index) (Drift, error) {
	return s.store.Verify(ctx, ix)
}
