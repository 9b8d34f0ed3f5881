package qdrant

import (
	"context"

	"github.com/qdrant/go-client/qdrant"

	"github.com/ragproxy/ragproxy/index"
	"github.com/ragproxy/ragproxy/retrieval"
)

// Searcher runs retrieval's summary and chunk searches on the collections of one index version: each query's
// vector and its BM25 terms (BM25Query, matching the Store's default document encoder) in one hybrid query,
// fused inside Qdrant. Bound to its version rather than to the aliases, it keeps answering with the pages of the
// index its server loaded while ingest syncs newer versions, until Sync drops its version (then its searches
// fail with ErrVersionMissing).
type Searcher struct {
	store             *Store
	version           string
	summaries, chunks string
}

var _ retrieval.VectorStore = (*Searcher)(nil)

// NewSearcher returns a Searcher over the collections of index version (an index's Manifest.Version).
func NewSearcher(s *Store, version string) *Searcher {
	sum, ch := s.VersionCollections(version)
	return &Searcher{store: s, version: version, summaries: sum, chunks: ch}
}

// Version returns the index version the searcher reads.
func (s *Searcher) Version() string { return s.version }

// Collections returns the names of the collections the searcher reads.
func (s *Searcher) Collections() (summaries, chunks string) { return s.summaries, s.chunks }

// SearchSummaries implements retrieval.VectorStore.
func (s *Searcher) SearchSummaries(ctx context.Context, q retrieval.VectorQuery, k int) ([]retrieval.VectorHit, error) {
	idx, val := BM25Query(q.Text)
	hits, err := s.store.searchSummaries(ctx, s.summaries, q.Vector, idx, val, scopeFilter(q.Scope), k)
	if err != nil {
		return nil, missing(err, s.version)
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
	if pageIDs != nil && len(pageIDs) == 0 {
		return nil, nil
	}
	idx, val := BM25Query(q.Text)
	filter := scopeFilter(q.Scope)
	if pageIDs != nil {
		// The pages were chosen within the scope already.
		filter = pagesFilter(pageIDs)
	}
	hits, err := s.store.searchChunks(ctx, s.chunks, q.Vector, idx, val, filter, k)
	if err != nil {
		return nil, missing(err, s.version)
	}
	out := make([]retrieval.VectorHit, len(hits))
	for i, h := range hits {
		out[i] = retrieval.VectorHit{PageID: h.PageID, Ord: h.Ord, URL: h.URL}
	}
	return out, nil
}

// scopeFilter selects the points of the pages in scope: those whose url_prefixes holds one of its keys. Nil
// for no scope.
func scopeFilter(s *retrieval.Scope) *qdrant.Filter {
	if s == nil {
		return nil
	}
	return &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatchKeywords(keyPrefixes, s.Keys()...)}}
}

// Verify reports how the collections the searcher reads differ from ix (see Store.Verify); ErrVersionMissing
// when they do not exist.
func (s *Searcher) Verify(ctx context.Context, ix *index.Index) (Drift, error) {
	d, err := s.store.verify(ctx, s.summaries, ix)
	return d, missing(err, s.version)
}
