package qdrant

import (
	"context"

	"github.com/qdrant/go-client/qdrant"

	"github.com/ragproxy/ragproxy/index"
	"github.com/ragproxy/ragproxy/retrieval"
)

// Searcher runs retrieval's summary and chunk searches on the collections of one index version: a query's vector,
// its BM25 terms (lexical.Config.SparseQuery, matching the Store's default document encoder), or both fused
// inside Qdrant; a batch of them in one request. Bound to its version rather than to the aliases, it keeps answering with the pages of the
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

// SearchSummaries implements retrieval.VectorStore: the queries' searches of the summaries in one request.
func (s *Searcher) SearchSummaries(ctx context.Context, qs []retrieval.VectorQuery, k int) ([][]retrieval.VectorHit, error) {
	queries := make([]*qdrant.QueryPoints, len(qs))
	for i, q := range qs {
		idx, val := queryVector(q.Text)
		var err error
		if queries[i], err = s.store.hybridQuery(s.summaries, q.Vector, idx, val, scopeFilter(q.Scope), k); err != nil {
			return nil, err
		}
	}
	res, err := s.store.hybridBatch(ctx, s.summaries, queries)
	if err != nil {
		return nil, missing(err, s.version)
	}
	out := make([][]retrieval.VectorHit, len(res))
	for i, points := range res {
		for _, h := range pageHits(points) {
			out[i] = append(out[i], retrieval.VectorHit{PageID: h.PageID, URL: h.URL, Score: float64(h.Score)})
		}
	}
	return out, nil
}

// SearchChunks implements retrieval.VectorStore: the queries' searches of the chunks in one request; nil
// pageIDs searches the whole chunks collection, where Store.SearchChunks would find nothing.
func (s *Searcher) SearchChunks(ctx context.Context, qs []retrieval.VectorQuery, pageIDs []int, k int) ([][]retrieval.VectorHit, error) {
	out := make([][]retrieval.VectorHit, len(qs))
	if pageIDs != nil && len(pageIDs) == 0 {
		return out, nil
	}
	queries := make([]*qdrant.QueryPoints, len(qs))
	for i, q := range qs {
		idx, val := queryVector(q.Text)
		filter := scopeFilter(q.Scope)
		if pageIDs != nil {
			filter = pagesFilter(pageIDs) // the pages were chosen within the scope already
		}
		var err error
		if queries[i], err = s.store.hybridQuery(s.chunks, q.Vector, idx, val, filter, k); err != nil {
			return nil, err
		}
	}
	res, err := s.store.hybridBatch(ctx, s.chunks, queries)
	if err != nil {
		return nil, missing(err, s.version)
	}
	for i, points := range res {
		for _, h := range chunkHits(points) {
			out[i] = append(out[i], retrieval.VectorHit{PageID: h.PageID, Ord: h.Ord, URL: h.URL, Score: float64(h.Score)})
		}
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
