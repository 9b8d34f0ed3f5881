package qdrant

import (
	"context"
	"fmt"

	"github.com/qdrant/go-client/qdrant"
)

// PageHit is a page found by SearchSummaries.
type PageHit struct {
	PageID    int
	URL       string
	Community int
	// Score is the fused reciprocal-rank score of a hybrid search, the search's own score when it had one query
	// vector; higher is better.
	Score float32
}

// ChunkHit is a chunk found by SearchChunks. Its id in the index is ix.Pages[PageID].Chunks[Ord].
type ChunkHit struct {
	PageID int
	Ord    int
	URL    string
	// Score is as PageHit's.
	Score float32
}

// SearchSummaries returns the k pages whose summary is nearest to dense and whose text best matches the
// sparse BM25 query (sparseIdx, sparseVal, as lexical.Config.SparseQuery makes them), each list k long, fused
// inside Qdrant with reciprocal rank fusion. Either query may be empty; with both empty there is nothing to search. It
// searches the current version (the alias); a server bound to the version it loaded uses a Searcher.
func (s *Store) SearchSummaries(ctx context.Context, dense []float32, sparseIdx []uint32, sparseVal []float32, k int) ([]PageHit, error) {
	return s.searchSummaries(ctx, s.summaries, dense, sparseIdx, sparseVal, nil, k)
}

// searchSummaries is SearchSummaries on a collection with any filter; nil searches every page.
func (s *Store) searchSummaries(ctx context.Context, coll string, dense []float32, sparseIdx []uint32, sparseVal []float32, filter *qdrant.Filter, k int) ([]PageHit, error) {
	points, err := s.hybrid(ctx, coll, dense, sparseIdx, sparseVal, filter, k)
	if err != nil {
		return nil, err
	}
	return pageHits(points), nil
}

// pageHits reads the summary points of a search.
func pageHits(points []*qdrant.ScoredPoint) []PageHit {
	if len(points) == 0 {
		return nil
	}
	hits := make([]PageHit, len(points))
	for i, p := range points {
		pl := p.GetPayload()
		hits[i] = PageHit{
			PageID:    int(pl[keyPageID].GetIntegerValue()),
			URL:       pl[keyURL].GetStringValue(),
			Community: int(pl[keyCommunity].GetIntegerValue()),
			Score:     p.GetScore(),
		}
	}
	return hits
}

// SearchChunks is SearchSummaries over the chunks of the pages pageIDs names (a payload filter on page_id).
// No page ids means no chunks.
func (s *Store) SearchChunks(ctx context.Context, dense []float32, sparseIdx []uint32, sparseVal []float32, pageIDs []int, k int) ([]ChunkHit, error) {
	if len(pageIDs) == 0 {
		return nil, nil
	}
	return s.searchChunks(ctx, s.chunks, dense, sparseIdx, sparseVal, pagesFilter(pageIDs), k)
}

// pagesFilter selects the points of the pages with the given ids.
func pagesFilter(pageIDs []int) *qdrant.Filter {
	ids := make([]int64, len(pageIDs))
	for i, id := range pageIDs {
		ids[i] = int64(id)
	}
	return &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatchInts(keyPageID, ids...)}}
}

// searchChunks is SearchChunks on a collection with any filter; nil searches every chunk.
func (s *Store) searchChunks(ctx context.Context, coll string, dense []float32, sparseIdx []uint32, sparseVal []float32, filter *qdrant.Filter, k int) ([]ChunkHit, error) {
	points, err := s.hybrid(ctx, coll, dense, sparseIdx, sparseVal, filter, k)
	if err != nil {
		return nil, err
	}
	return chunkHits(points), nil
}

// chunkHits reads the chunk points of a search.
func chunkHits(points []*qdrant.ScoredPoint) []ChunkHit {
	if len(points) == 0 {
		return nil
	}
	hits := make([]ChunkHit, len(points))
	for i, p := range points {
		pl := p.GetPayload()
		hits[i] = ChunkHit{
			PageID: int(pl[keyPageID].GetIntegerValue()),
			Ord:    int(pl[keyOrd].GetIntegerValue()),
			URL:    pl[keyURL].GetStringValue(),
			Score:  p.GetScore(),
		}
	}
	return hits
}

// hybridQuery builds the query: one prefetch per non-empty query vector, each carrying the filter, fused with
// RRF. The filter is repeated at the top level too, which Qdrant applies to the fused result. A query with one
// vector searches it directly, so that its hits carry their own scores (cosine similarity, or the BM25 terms'
// dot product) rather than reciprocal ranks: retrieval reads the BM25 scores (see retrieval.Config.LeadRatio).
func (s *Store) hybridQuery(coll string, dense []float32, sparseIdx []uint32, sparseVal []float32, filter *qdrant.Filter, k int) (*qdrant.QueryPoints, error) {
	if len(sparseIdx) != len(sparseVal) {
		return nil, fmt.Errorf("qdrant: search %s: %d sparse indices, %d values", coll, len(sparseIdx), len(sparseVal))
	}
	if k <= 0 {
		return nil, fmt.Errorf("qdrant: search %s: k = %d", coll, k)
	}
	limit := qdrant.PtrOf(uint64(k))
	var prefetch []*qdrant.PrefetchQuery
	if len(dense) > 0 {
		prefetch = append(prefetch, &qdrant.PrefetchQuery{
			Query: qdrant.NewQueryDense(dense), Using: qdrant.PtrOf(DenseVector), Filter: filter, Limit: limit,
		})
	}
	if len(sparseIdx) > 0 {
		prefetch = append(prefetch, &qdrant.PrefetchQuery{
			Query: qdrant.NewQuerySparse(sparseIdx, sparseVal), Using: qdrant.PtrOf(SparseVector), Filter: filter, Limit: limit,
		})
	}
	if len(prefetch) == 0 {
		return nil, nil
	}
	if len(prefetch) == 1 {
		pf := prefetch[0]
		return &qdrant.QueryPoints{
			CollectionName: coll,
			Query:          pf.Query,
			Using:          pf.Using,
			Filter:         filter,
			Limit:          limit,
			WithPayload:    qdrant.NewWithPayloadInclude(keyPageID, keyURL, keyCommunity, keyOrd),
		}, nil
	}
	fusion := qdrant.NewQueryFusion(qdrant.Fusion_RRF)
	if s.rrfK > 0 {
		fusion = qdrant.NewQueryRRF(&qdrant.Rrf{K: qdrant.PtrOf(s.rrfK)})
	}
	return &qdrant.QueryPoints{
		CollectionName: coll,
		Prefetch:       prefetch,
		Query:          fusion,
		Filter:         filter,
		Limit:          limit,
		WithPayload:    qdrant.NewWithPayloadInclude(keyPageID, keyURL, keyCommunity, keyOrd),
	}, nil
}

// hybridBatch runs several queries built by hybridQuery on one collection in one request; a nil query (nothing
// to search) answers no points.
func (s *Store) hybridBatch(ctx context.Context, coll string, qs []*qdrant.QueryPoints) ([][]*qdrant.ScoredPoint, error) {
	out := make([][]*qdrant.ScoredPoint, len(qs))
	var send []*qdrant.QueryPoints
	var at []int
	for i, q := range qs {
		if q != nil {
			send, at = append(send, q), append(at, i)
		}
	}
	if len(send) == 0 {
		return out, nil
	}
	res, err := s.client.QueryBatch(ctx, &qdrant.QueryBatchPoints{CollectionName: coll, QueryPoints: send})
	if err != nil {
		return nil, fmt.Errorf("qdrant: search %s: %w", coll, err)
	}
	if len(res) != len(send) {
		return nil, fmt.Errorf("qdrant: search %s: %d results for %d queries", coll, len(res), len(send))
	}
	for j, r := range res {
		out[at[j]] = r.GetResult()
	}
	return out, nil
}

func (s *Store) hybrid(ctx context.Context, coll string, dense []float32, sparseIdx []uint32, sparseVal []float32, filter *qdrant.Filter, k int) ([]*qdrant.ScoredPoint, error) {
	q, err := s.hybridQuery(coll, dense, sparseIdx, sparseVal, filter, k)
	if err != nil || q == nil {
		return nil, err
	}
	points, err := s.client.Query(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("qdrant: search %s: %w", coll, err)
	}
	return points, nil
}
