package retrieval

import (
	"context"
	"errors"
	"fmt"
	"slices"
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
}

// VectorStore runs the summary and chunk searches outside the process (retrieval/qdrant's Searcher runs them in
// Qdrant): each search is dense and BM25 at once, fused by the store, and returns hits best first.
type VectorStore interface {
	// SearchSummaries ranks pages by their summary vector and their text.
	SearchSummaries(ctx context.Context, q VectorQuery, k int) ([]VectorHit, error)
	// SearchChunks ranks the chunks of the pages pageIDs names; nil pageIDs searches every chunk.
	SearchChunks(ctx context.Context, q VectorQuery, pageIDs []int, k int) ([]VectorHit, error)
}

// CommunitySource supplies the community ids of pages (retrieval/neo4j's Store reads them from the graph).
// Pages it leaves out keep the index's community.
type CommunitySource interface {
	Communities(ctx context.Context, pageIDs []int) (map[int]int, error)
}

// Backends are the optional external stores a Retriever searches; the zero value searches in process.
type Backends struct {
	// Vectors, when set, runs the summary and chunk searches (page lists summary-dense with page-bm25, and
	// chunk-dense with chunk-bm25, each pair as one hybrid list; and the chunk stage). Titles, fusion across
	// lists, community selection and the context stay in process. Default nil: in process.
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

// rankPagesRemote is rankPages with the summary and chunk lists searched by the VectorStore. A hybrid list
// stands for the two in-process lists it fuses, so it weighs their sum; a list left out of Config.PageLists
// leaves its half out of the hybrid query.
func (r *Retriever) rankPagesRemote(ctx context.Context, queries []string, vecs [][]float32) ([]scored, error) {
	n := r.cfg.PagesPerList
	has := func(name string) bool { return slices.Contains(r.cfg.PageLists, name) }
	weight := func(names ...string) float64 {
		w := 0.0
		for _, name := range names {
			if !has(name) {
				continue
			}
			if lw, ok := r.cfg.ListWeights[name]; ok {
				w += lw
			} else {
				w++
			}
		}
		return w
	}
	query := func(qi int, dense, lexical string) VectorQuery {
		q := VectorQuery{Scope: r.scope}
		if has(dense) {
			q.Vector = vecs[qi]
		}
		if has(lexical) {
			q.Text = queries[qi]
		}
		return q
	}
	var lists [][]int
	var weights []float64
	add := func(ids []int, w float64) {
		if len(ids) > 0 {
			lists, weights = append(lists, ids), append(weights, w)
		}
	}
	for qi, q := range queries {
		if sq := query(qi, ListSummaryDense, ListPageBM25); sq.Vector != nil || sq.Text != "" {
			hits, err := r.backends.Vectors.SearchSummaries(ctx, sq, n)
			if err != nil {
				return nil, fmt.Errorf("summary search: %w", err)
			}
			ids, err := r.pageIDs(hits)
			if err != nil {
				return nil, err
			}
			add(ids, weight(ListSummaryDense, ListPageBM25))
		}
		if cq := query(qi, ListChunkDense, ListChunkBM25); cq.Vector != nil || cq.Text != "" {
			hits, err := r.backends.Vectors.SearchChunks(ctx, cq, nil, r.cfg.ChunksPerList)
			if err != nil {
				return nil, fmt.Errorf("chunk search: %w", err)
			}
			chunks, err := r.chunkIDs(hits)
			if err != nil {
				return nil, err
			}
			add(r.pagesOf(chunks, n), weight(ListChunkDense, ListChunkBM25))
		}
		if has(ListTitleMatch) {
			add(r.named.search(q, n, r.pageFilter()), weight(ListTitleMatch))
		}
		if has(ListTitleBM25) {
			var ids []int
			for _, h := range r.titles.Search(q, n, r.pageFilter()) {
				ids = append(ids, h.Doc)
			}
			add(ids, weight(ListTitleBM25))
		}
	}
	return r.topPages(r.fuseWeighted(lists, weights)), nil
}

// rankChunksRemote is rankChunks with each query's dense and BM25 chunk searches run as one hybrid search by
// the VectorStore, restricted to the kept pages.
func (r *Retriever) rankChunksRemote(ctx context.Context, queries []string, vecs [][]float32, pages []scored) ([]scored, error) {
	ids := make([]int, len(pages))
	for i, p := range pages {
		ids[i] = p.id
	}
	var lists [][]int
	var weights []float64
	for qi, q := range queries {
		vq := VectorQuery{Text: q, Scope: r.scope}
		w := 1.0
		if r.cfg.ChunkDenseWeight > 0 {
			vq.Vector, w = vecs[qi], w+r.cfg.ChunkDenseWeight
		}
		hits, err := r.backends.Vectors.SearchChunks(ctx, vq, ids, r.cfg.ChunksPerList)
		if err != nil {
			return nil, fmt.Errorf("chunk search: %w", err)
		}
		chunks, err := r.chunkIDs(hits)
		if err != nil {
			return nil, err
		}
		if len(chunks) > 0 {
			lists, weights = append(lists, chunks), append(weights, w)
		}
	}
	return r.topChunks(r.fuseWeighted(lists, weights), pages), nil
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
