package retrieval

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/ragproxy/ragproxy/retrieval/fusion"
	"github.com/ragproxy/ragproxy/retrieval/vector"
)

// scored is an id with its fused score, in rank order.
type scored struct {
	id    int
	score float64
}

// fuseWeighted is weighted reciprocal rank fusion with the configured K (zero: the number of lists) and rank
// base.
func (r *Retriever) fuseWeighted(lists [][]int, weights []float64) []scored {
	k := r.cfg.RRFK
	if k <= 0 {
		k = float64(len(lists))
	}
	fused := fusion.WeightedRRF(lists, weights, k, r.cfg.RRFRankBase)
	out := make([]scored, len(fused))
	for i, f := range fused {
		out[i] = scored{f.ID, f.Score}
	}
	return out
}

// rankPages fuses, over every query, the configured page lists. With a VectorStore the summary and chunk lists
// come from it, one list per search as in process, so the ranking is the same whichever store answers.
func (r *Retriever) rankPages(ctx context.Context, queries []string, vecs [][]float32, same sameQueryLists) ([]scored, error) {
	n := r.cfg.PagesPerList
	remote := r.backends.Vectors != nil
	var lists [][]int
	var weights []float64
	var denseChunks [][]vector.Hit
	if !remote && slices.Contains(r.cfg.PageLists, ListChunkDense) {
		if r.chunkANN != nil && !r.cfg.ExactChunkSearch {
			denseChunks = r.chunkANN.SearchMultiFilter(same.uniqueVecs, r.cfg.ChunksPerList, r.chunkFilter())
		} else {
			denseChunks = r.chunks.SearchMultiFilter(same.uniqueVecs, r.cfg.ChunksPerList, r.chunkFilter())
		}
	}
	memo := map[listKey][]int{}
	if remote { // every store list, of every query, is in memo after this
		if err := r.remotePageLists(ctx, queries, vecs, same, memo); err != nil {
			return nil, err
		}
	}
	for qi, q := range queries {
		for _, name := range r.cfg.PageLists {
			key := same.key(name, qi)
			ids, done := memo[key]
			switch {
			case done:
			case name == ListChunkDense:
				var chunks []int
				for _, h := range denseChunks[same.vec[qi]] {
					chunks = append(chunks, h.ID)
				}
				ids = r.pagesOf(chunks, n)
			default:
				ids = r.pageList(name, q, vecs[qi], n)
			}
			memo[key] = ids
			if len(ids) > 0 {
				lists = append(lists, ids)
				w, ok := r.cfg.ListWeights[name]
				if !ok {
					w = 1
				}
				weights = append(weights, w)
			}
		}
	}
	return r.topPages(r.fuseWeighted(lists, weights)), nil
}

// pageList runs one query of the page list name (any but ListChunkDense, which rankPages batches).
func (r *Retriever) pageList(name, q string, vec []float32, n int) []int {
	var ids []int
	switch name {
	case ListSummaryDense:
		for _, h := range r.summaries.Search(vec, n, r.pageFilter()) {
			ids = append(ids, h.ID)
		}
	case ListTitleMatch:
		ids = r.named.search(q, n, r.pageFilter())
	case ListTitleBM25:
		for _, h := range r.titles.Search(q, n, r.pageFilter()) {
			ids = append(ids, h.Doc)
		}
	case ListPageBM25:
		for _, h := range r.pageBM25.Search(q, n, r.pageFilter()) {
			ids = append(ids, h.Doc)
		}
	case ListChunkBM25:
		var chunks []int
		for _, h := range r.chunkBM25.Search(q, r.cfg.ChunksPerList, r.chunkFilter()) {
			chunks = append(chunks, h.Doc)
		}
		ids = r.pagesOf(chunks, n)
	}
	return ids
}

// topPages applies the link prior to fused pages and keeps the best FusedPages: each score is multiplied by
// 1 + LinkPrior·ln(1 + the page's inbound links). Pages the site links to from many of its own pages (a
// programme's page, the academic calendar) then win close calls against pages that merely repeat the query's
// words, such as catalogue listings nobody links to.
func (r *Retriever) topPages(fused []scored) []scored {
	if g := r.cfg.LinkPrior; g > 0 {
		rescale(fused, func(page int) float64 { return 1 + g*math.Log1p(float64(r.inLinks[page])) })
	}
	if len(fused) > r.cfg.FusedPages {
		fused = fused[:r.cfg.FusedPages]
	}
	return fused
}

// pagesOf ranks pages by their best chunk in a ranked chunk list.
func (r *Retriever) pagesOf(chunks []int, n int) []int {
	seen := map[int]bool{}
	var pages []int
	for _, c := range chunks {
		p := r.ix.Chunks[c].PageID
		if !seen[p] {
			seen[p] = true
			pages = append(pages, p)
			if len(pages) == n {
				break
			}
		}
	}
	return pages
}

// selectPages keeps KeepPages of the fused pages by the FHNW prototype's community rule: pages whose community is
// common among the fused pages first, then by fused rank. Pages of small components (community 9999) count as
// singletons. The kept pages stay in fused order: the community rule decides which pages stay, not how they rank.
// communities gives each fused page's community.
func (r *Retriever) selectPages(fused []scored, communities map[int]int) []scored {
	if len(fused) <= r.cfg.KeepPages {
		return fused
	}
	if r.cfg.NoCommunities {
		return fused[:r.cfg.KeepPages]
	}
	key := func(s scored) string {
		c := communities[s.id]
		if c == 9999 {
			return fmt.Sprintf("page:%d", s.id)
		}
		return fmt.Sprintf("community:%d", c)
	}
	freq := map[string]int{}
	for _, s := range fused {
		freq[key(s)]++
	}
	protect := max(0, min(r.cfg.ProtectPages, r.cfg.KeepPages))
	order := make([]int, len(fused))
	for i := range order {
		order[i] = i
	}
	rest := order[protect:]
	sort.SliceStable(rest, func(a, b int) bool {
		return freq[key(fused[rest[a]])] > freq[key(fused[rest[b]])]
	})
	keep := order[:r.cfg.KeepPages]
	sort.Ints(keep)
	out := make([]scored, len(keep))
	for i, k := range keep {
		out[i] = fused[k]
	}
	return out
}

// rankChunks searches the chunks of the kept pages with every query, dense and BM25, and fuses; with a
// VectorStore it runs the two searches there, restricted to the kept pages.
// It also returns the best passage coverage per page (selectPassages), nil without passage reranking.
func (r *Retriever) rankChunks(ctx context.Context, queries []string, vecs [][]float32, same sameQueryLists, pages []scored, texts *chunkTexts) ([]scored, map[int]float64, error) {
	var ids, pageIDs []int
	for _, p := range pages {
		pageIDs = append(pageIDs, p.id)
		ids = append(ids, r.ix.Pages[p.id].Chunks...)
	}
	sorted := slices.Sorted(slices.Values(ids)) // for BM25's lookups
	n := r.cfg.ChunksPerList
	var lists [][]int
	var weights []float64
	memo := map[listKey][]int{}
	remote := r.backends.Vectors != nil
	if remote && len(pageIDs) > 0 {
		// Every chunk search of the stage in one request.
		var qs []VectorQuery
		var keys []listKey
		for qi, q := range queries {
			dk, lk := same.key(ListChunkDense, qi), same.key(ListChunkBM25, qi)
			if r.cfg.ChunkDenseWeight > 0 && !slices.Contains(keys, dk) {
				qs, keys = append(qs, VectorQuery{Vector: vecs[qi], Scope: r.scope}), append(keys, dk)
			}
			if !slices.Contains(keys, lk) {
				qs, keys = append(qs, VectorQuery{Text: q, Scope: r.scope}), append(keys, lk)
			}
		}
		res, err := r.backends.Vectors.SearchChunks(ctx, qs, pageIDs, n)
		if err != nil {
			return nil, nil, fmt.Errorf("chunk search: %w", err)
		}
		for i, key := range keys {
			if memo[key], err = r.chunkIDs(res[i]); err != nil {
				return nil, nil, err
			}
		}
	}
	for qi, q := range queries {
		dk, lk := same.key(ListChunkDense, qi), same.key(ListChunkBM25, qi)
		// With a VectorStore, memo holds what it found.
		dense, ok := memo[dk]
		if !ok && !remote && r.cfg.ChunkDenseWeight > 0 {
			for _, h := range r.chunks.SearchIDs(vecs[qi], n, ids) {
				dense = append(dense, h.ID)
			}
			memo[dk] = dense
		}
		lex, ok := memo[lk]
		if !ok && !remote {
			for _, h := range r.chunkBM25.SearchIn(q, n, sorted) {
				lex = append(lex, h.Doc)
			}
			memo[lk] = lex
		}
		if len(dense) > 0 && r.cfg.ChunkDenseWeight > 0 {
			lists, weights = append(lists, dense), append(weights, r.cfg.ChunkDenseWeight)
		}
		if len(lex) > 0 {
			lists, weights = append(lists, lex), append(weights, 1)
		}
	}
	fused := r.fuseWeighted(lists, weights)
	if r.cfg.NoPassageRerank {
		return r.topChunks(fused, pages, r.cfg.KeepChunks), nil, nil
	}
	return r.selectPassages(queries, r.topChunks(fused, pages, max(passageCandidates, r.cfg.KeepChunks)), texts)
}

// topChunks ranks fused chunks with their page's rank and keeps the best keep, each text once. A chunk's
// score is multiplied by 1 + PageBoost/(1 + its page's rank), so when passages of several kept pages score
// alike, the best page's win. Sites repeat passages across pages (a course description on the course list, the
// department page and the programme page) and a copy only takes context budget from other passages; the copy
// kept is the one on the best-ranked page.
func (r *Retriever) topChunks(fused []scored, pages []scored, keep int) []scored {
	pageRank := make(map[int]int, len(pages))
	for i, p := range pages {
		pageRank[p.id] = i
	}
	if b := r.cfg.PageBoost; b > 0 {
		rescale(fused, func(chunk int) float64 { return 1 + b/float64(1+pageRank[r.ix.Chunks[chunk].PageID]) })
	}
	first := map[uint64]int{} // text key -> index in out
	out := fused[:0:0]
	for _, c := range fused {
		ch := r.ix.Chunks[c.id]
		text := r.textKeys[c.id]
		if i, ok := first[text]; ok {
			if pageRank[ch.PageID] < pageRank[r.ix.Chunks[out[i].id].PageID] {
				out[i].id = c.id
			}
			continue
		}
		if len(out) == keep {
			continue // still looking for copies of kept chunks on better pages
		}
		first[text] = len(out)
		out = append(out, c)
	}
	return out
}

// rescale multiplies each fused score by factor(id) and sorts again, best first, ties keeping their order.
func rescale(fused []scored, factor func(id int) float64) {
	for i := range fused {
		fused[i].score *= factor(fused[i].id)
	}
	sort.SliceStable(fused, func(a, b int) bool { return fused[a].score > fused[b].score })
}

// assemble builds the context: per kept page (in rank order) its URL, title, summary and selected chunks in page
// order, dropping the lowest-ranked chunks until it fits the token budget. A page without selected chunks is left
// out (as in the FHNW prototype).
func (r *Retriever) assemble(pages []scored, chunks []scored, read *chunkTexts) ([]PageHit, []ChunkHit, string, int, error) {
	budget := r.cfg.ContextTokens
	header := func(p int) string {
		pg := r.ix.Pages[p]
		return fmt.Sprintf("## %s\nURL: %s\nSummary: %s\n\n", pg.Title, pg.URL, pg.Summary)
	}
	// Keep the best chunks while they fit, each page's header counted with its first chunk.
	headerTokens := map[int]int{}
	total := 0
	chosen := chunks[:0:0]
	for _, c := range chunks {
		p := r.ix.Chunks[c.id].PageID
		cost := r.ix.Chunks[c.id].Tokens + 1
		h, seen := headerTokens[p]
		if !seen {
			h = r.tok.Count(header(p))
			cost += h
		}
		if total+cost > budget && len(chosen) > 0 {
			continue // a smaller chunk further down may still fit
		}
		if !seen {
			headerTokens[p] = h
		}
		total += cost
		chosen = append(chosen, c)
	}
	byPage := map[int][]scored{}
	for _, c := range chosen {
		p := r.ix.Chunks[c.id].PageID
		byPage[p] = append(byPage[p], c)
		if _, err := read.get(c.id); err != nil {
			return nil, nil, "", 0, err
		}
	}
	texts := read.read
	var (
		b         strings.Builder
		pageHits  []PageHit
		chunkHits []ChunkHit
	)
	for _, p := range pages {
		cs := byPage[p.id]
		if len(cs) == 0 {
			continue
		}
		pg := r.ix.Pages[p.id]
		pageHits = append(pageHits, PageHit{ID: p.id, URL: pg.URL, Title: pg.Title, Summary: pg.Summary,
			Community: pg.Community, Score: p.score})
		sort.Slice(cs, func(i, j int) bool { return r.ix.Chunks[cs[i].id].Ord < r.ix.Chunks[cs[j].id].Ord })
		b.WriteString(header(p.id))
		for _, c := range cs {
			b.WriteString(strings.TrimSpace(texts[c.id]))
			b.WriteString("\n\n")
		}
		b.WriteString(pageSeparator)
	}
	for _, c := range chosen {
		ch := r.ix.Chunks[c.id]
		chunkHits = append(chunkHits, ChunkHit{ID: c.id, PageID: ch.PageID, URL: r.ix.Pages[ch.PageID].URL,
			Text: texts[c.id], Score: c.score})
	}
	// The size is the sum of the parts' sizes (each chunk's was counted at ingest): counting the whole context
	// again would cost a millisecond. The budget above counted a token for each chunk's separator, which mostly
	// merges with the chunk's own last token, so the sum drops it.
	return pageHits, chunkHits, b.String(), total - len(chosen) + len(pageHits)*r.tok.Count(pageSeparator), nil
}

const pageSeparator = "---\n\n"

// confidence is the best cosine similarity between any query and a selected chunk or page summary.
func (r *Retriever) confidence(vecs [][]float32, res *Result) float64 {
	best := 0.0
	for _, v := range vecs {
		for _, c := range res.Chunks {
			best = max(best, float64(dot(v, r.ix.ChunkVectors[c.ID])))
		}
		for _, p := range res.Pages {
			best = max(best, float64(dot(v, r.ix.SummaryVectors[p.ID])))
		}
	}
	return best
}

func dot(a, b []float32) float32 {
	var s float32
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}
