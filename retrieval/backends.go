package retrieval

import (
	"context"
	"errors"
	"fmt"
)

// VectorQuery is one query of a VectorStore search: its embedding for the dense search and its text for the
// BM25 search. Either may be empty, which skips that half.
type VectorQuery struct {
	Vector []float32
	Text   string
	// Scope, when set, restricts the search to the pages under its prefixes, before ranking (a payload filter
	// on the pages' ScopeKeys in Qdrant).
	Scope *Scope
}

// VectorHit is a page or chunk a VectorStore found, named by its page's id and URL in the index the store was
// synced from; Ord is a chunk's position within its page (0 for pages).
type VectorHit struct {
	PageID int
	Ord    int
	URL    string
	// Score is the search's score of the hit, higher is better: for the BM25 half of a query, its BM25 score
	// (retrieval compares a list's first scores, see Config.LeadRatio).
	Score float64
}

// VectorStore runs the summary and chunk searches outside the process (retrieval/qdrant's Searcher runs them in
// Qdrant), several in one request: retrieval sends each stage's searches together (the page lists of every
// rewrite, then the chunk searches). Hits come best first; the i-th result answers qs[i]. Retrieval asks for
// one half of a VectorQuery at a time, dense or BM25; a query with both is fused by the store.
type VectorStore interface {
	// SearchSummaries ranks pages by their summary vector and their text, for each query.
	SearchSummaries(ctx context.Context, qs []VectorQuery, k int) ([][]VectorHit, error)
	// SearchChunks ranks the chunks of the pages pageIDs names, for each query; nil pageIDs searches every
	// chunk.
	SearchChunks(ctx context.Context, qs []VectorQuery, pageIDs []int, k int) ([][]VectorHit, error)
}

// CommunitySource supplies the community ids of pages (retrieval/neo4j's Store reads them from the graph).
// Pages it leaves out keep the index's community.
type CommunitySource interface {
	Communities(ctx context.Context, pageIDs []int) (map[int]int, error)
}

// Backends are the optional external stores a Retriever searches; the zero value searches in process.
type Backends struct {
	// Vectors, when set, runs the summary and chunk searches (page lists summary-dense, page-bm25, chunk-dense
	// and chunk-bm25, one search each, and the chunk stage's two). Titles, fusion, community selection and the
	// context stay in process, so the ranking is the one in process. Default nil: in process.
	Vectors VectorStore
	// Communities, when set, supplies the community ids of the fused pages. Default nil: the index's.
	Communities CommunitySource
}

// ErrBackendMismatch is returned when a backend names pages or chunks the loaded index does not have at those
// ids: the backend was synced from another version of the index.
var ErrBackendMismatch = errors.New("backend holds another version of the index")

// WithBackends returns a retriever over the same index and configuration that runs its searches on b.
func (r *Retriever) WithBackends(b Backends) *Retriever {
	c := *r
	c.backends = b
	return &c
}

// Backends returns the retriever's backends.
func (r *Retriever) Backends() Backends { return r.backends }

// storeList reports whether a VectorStore answers the page list name: the dense and BM25 lists of summaries and
// chunks. Title lists stay in process.
func storeList(name string) bool {
	switch name {
	case ListSummaryDense, ListPageBM25, ListChunkDense, ListChunkBM25:
		return true
	}
	return false
}

// remoteQuery is one query of the page list name (a storeList) for the VectorStore: its dense or its BM25 half,
// and whether it searches summaries (else chunks).
func (r *Retriever) remoteQuery(name, q string, vec []float32) (vq VectorQuery, summaries bool) {
	vq.Scope = r.scope
	switch name {
	case ListSummaryDense, ListChunkDense:
		vq.Vector = vec
	default:
		vq.Text = q
	}
	return vq, name == ListSummaryDense || name == ListPageBM25
}

// remoteIDs turns the hits of a storeList search into the list's page ids.
func (r *Retriever) remoteIDs(summaries bool, hits []VectorHit, n int) ([]int, error) {
	if summaries {
		return r.pageIDs(hits)
	}
	chunks, err := r.chunkIDs(hits)
	if err != nil {
		return nil, err
	}
	return r.pagesOf(chunks, n), nil
}

// remotePageLists runs every storeList query of the page stage, for every query, as one summary batch and one
// chunk batch, and records each list in memo under its key, and each BM25 list's leading page in leads.
func (r *Retriever) remotePageLists(ctx context.Context, queries []string, vecs [][]float32, same sameQueryLists, memo map[listKey][]int, leads map[listKey]int) error {
	type want struct {
		key       listKey
		summaries bool
	}
	var sumQ, chQ []VectorQuery
	var sumW, chW []want
	seen := map[listKey]bool{}
	for qi, q := range queries {
		for _, name := range r.cfg.PageLists {
			key := same.key(name, qi)
			if !storeList(name) || seen[key] {
				continue
			}
			seen[key] = true
			vq, summaries := r.remoteQuery(name, q, vecs[qi])
			if summaries {
				sumQ, sumW = append(sumQ, vq), append(sumW, want{key, true})
			} else {
				chQ, chW = append(chQ, vq), append(chW, want{key, false})
			}
		}
	}
	record := func(ws []want, res [][]VectorHit) error {
		for i, w := range ws {
			hits := res[i]
			ids, err := r.remoteIDs(w.summaries, hits, r.cfg.PagesPerList)
			if err != nil {
				return err
			}
			memo[w.key] = ids
			if w.key.list == ListPageBM25 || w.key.list == ListChunkBM25 {
				if p := r.leadingPage(len(hits), func(i int) int { return hits[i].PageID },
					func(i int) float64 { return hits[i].Score }); p >= 0 {
					leads[w.key] = p
				}
			}
		}
		return nil
	}
	if len(sumQ) > 0 {
		res, err := r.backends.Vectors.SearchSummaries(ctx, sumQ, r.cfg.PagesPerList)
		if err != nil {
			return fmt.Errorf("summary search: %w", err)
		}
		if err := record(sumW, res); err != nil {
			return err
		}
	}
	if len(chQ) > 0 {
		res, err := r.backends.Vectors.SearchChunks(ctx, chQ, nil, r.cfg.ChunksPerList)
		if err != nil {
			return fmt.Errorf("chunk search: %w", err)
		}
		if err := record(chW, res); err != nil {
			return err
		}
	}
	return nil
}

// pageIDs maps summary hits to page ids, checking each against the loaded index.
func (r *Retriever) pageIDs(hits []VectorHit) ([]int, error) {
	ids := make([]int, 0, len(hits))
	for _, h := range hits {
		if h.PageID < 0 || h.PageID >= len(r.ix.Pages) || r.ix.Pages[h.PageID].URL != h.URL {
			return nil, fmt.Errorf("page %d (%s): %w", h.PageID, h.URL, ErrBackendMismatch)
		}
		if r.allowed == nil || r.allowed[h.PageID] {
			ids = append(ids, h.PageID)
		}
	}
	return ids, nil
}

// chunkIDs maps chunk hits to chunk ids: the Ord-th chunk of the page.
func (r *Retriever) chunkIDs(hits []VectorHit) ([]int, error) {
	ids := make([]int, 0, len(hits))
	for _, h := range hits {
		if h.PageID < 0 || h.PageID >= len(r.ix.Pages) || r.ix.Pages[h.PageID].URL != h.URL ||
			h.Ord < 0 || h.Ord >= len(r.ix.Pages[h.PageID].Chunks) {
			return nil, fmt.Errorf("chunk %d of page %d (%s): %w", h.Ord, h.PageID, h.URL, ErrBackendMismatch)
		}
		if r.allowed == nil || r.allowed[h.PageID] {
			ids = append(ids, r.ix.Pages[h.PageID].Chunks[h.Ord])
		}
	}
	return ids, nil
}

// communities returns the community of each fused page: from the CommunitySource when there is one (pages it
// does not know keep the index's), else from the index.
func (r *Retriever) communities(ctx context.Context, fused []scored) (map[int]int, error) {
	out := make(map[int]int, len(fused))
	for _, s := range fused {
		out[s.id] = r.ix.Pages[s.id].Community
	}
	if r.backends.Communities == nil || r.cfg.NoCommunities || len(fused) <= r.cfg.KeepPages {
		return out, nil
	}
	ids := make([]int, len(fused))
	for i, s := range fused {
		ids[i] = s.id
	}
	remote, err := r.backends.Communities.Communities(ctx, ids)
	if err != nil {
		return nil, fmt.Errorf("communities: %w", err)
	}
	for id, c := range remote {
		if _, ok := out[id]; ok {
			out[id] = c
		}
	}
	return out, nil
}
