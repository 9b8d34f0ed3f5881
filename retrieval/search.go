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
	fused := fusion.WeightedRRF(lists, weights, r.rrfK(len(lists)), r.cfg.RRFRankBase)
	out := make([]scored, len(fused))
	for i, f := range fused {
		out[i] = scored{f.ID, f.Score}
	}
	return out
}

// rrfK is the reciprocal rank fusion constant for n fused lists: RRFK, or n when RRFK is zero.
func (r *Retriever) rrfK(n int) float64 {
	if r.cfg.RRFK > 0 {
		return r.cfg.RRFK
	}
	return float64(n)
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
	// A BM25 list's first page when it leads the list (see leadingPage), and each lead once per time its list is
	// fused, with the list's weight.
	leads := map[listKey]int{}
	var votes []scored
	if remote { // every store list, of every query, is in memo after this
		if err := r.remotePageLists(ctx, queries, vecs, same, memo, leads); err != nil {
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
				var lead int
				if ids, lead = r.pageList(name, q, vecs[qi], n); lead >= 0 {
					leads[key] = lead
				}
			}
			memo[key] = ids
			if len(ids) > 0 {
				lists = append(lists, ids)
				w, ok := r.cfg.ListWeights[name]
				if !ok {
					w = 1
				}
				weights = append(weights, w)
				if p, ok := leads[key]; ok {
					votes = append(votes, scored{p, w})
				}
			}
		}
	}
	return r.topPages(r.addLeads(r.fuseWeighted(lists, weights), votes, len(lists))), nil
}

// addLeads gives each leading page (leadingPage) of votes, a page with its list's weight, a second first place
// in its list: its weight's reciprocal-rank score for rank one among n fused lists is added to the page's fused
// score, and fused is sorted again.
func (r *Retriever) addLeads(fused, votes []scored, n int) []scored {
	if len(votes) == 0 {
		return fused
	}
	extra := map[int]float64{}
	for _, v := range votes {
		extra[v.id] += v.score / (r.rrfK(n) + float64(r.cfg.RRFRankBase))
	}
	for i := range fused {
		fused[i].score += extra[fused[i].id]
	}
	sort.SliceStable(fused, func(a, b int) bool { return fused[a].score > fused[b].score })
	return fused
}

// leadingPage returns the first page of a ranked BM25 list when its score is at least LeadRatio times the best
// score of any other page in the list, else -1; hits n, page(i) and score(i) give the list's i-th hit, pages
// repeating in a list of chunks. Reciprocal rank fusion weighs every list's first place alike, whether the list
// found one page far ahead of the rest or several close together, and a first page that far ahead is nearly
// always the right page: over the four dev sites' questions and their rewrites, the first page of a page or chunk
// BM25 list was an expected page in 346 of 588 lists (59%), and in 105 of the 108 lists where it led the next
// page by 1.4 times (97%).
// Such a page gets a second first place in its list (rankPages), which lifts it over a hub that the other
// lists rank well on the question's commoner words, and does not move it past a page most lists agree on.
func (r *Retriever) leadingPage(n int, page func(i int) int, score func(i int) float64) int {
	if r.cfg.LeadRatio <= 0 || n < 2 {
		return -1
	}
	first := page(0)
	for i := 1; i < n; i++ {
		if page(i) != first {
			if score(0) >= r.cfg.LeadRatio*score(i) {
				return first
			}
			return -1
		}
	}
	return -1
}

// pageList runs one query of the page list name (any but ListChunkDense, which rankPages batches). lead is the
// list's leading page (leadingPage) for a BM25 list, else -1.
func (r *Retriever) pageList(name, q string, vec []float32, n int) (ids []int, lead int) {
	lead = -1
	switch name {
	case ListSummaryDense:
		for _, h := range r.summaries.Search(vec, n, r.pageFilter()) {
			ids = append(ids, h.ID)
		}
	case ListTitleMatch:
		ids = r.named.search(q, n, r.pageFilter())
	case ListTitleBM25:
		for _, h := range r.titles.SearchLang(r.qlang, q, n, r.pageFilter()) {
			ids = append(ids, h.Doc)
		}
	case ListDefinition:
		ids = r.lex.definingPages(q, n, r.pageFilter())
	case ListPageBM25:
		hits := r.pageBM25.SearchLang(r.qlang, q, n, r.pageFilter())
		for _, h := range hits {
			ids = append(ids, h.Doc)
		}
		lead = r.leadingPage(len(hits), func(i int) int { return hits[i].Doc }, func(i int) float64 { return hits[i].Score })
	case ListChunkBM25:
		hits := r.chunkBM25.SearchLang(r.qlang, q, r.cfg.ChunksPerList, r.chunkFilter())
		chunks := make([]int, len(hits))
		for i, h := range hits {
			chunks[i] = h.Doc
		}
		ids = r.pagesOf(chunks, n)
		lead = r.leadingPage(len(hits), func(i int) int { return r.ix.Chunks[hits[i].Doc].PageID },
			func(i int) float64 { return hits[i].Score })
	}
	return ids, lead
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
			for _, h := range r.chunkBM25.SearchInLang(r.qlang, q, n, sorted) {
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
		tokens, err := read.compact(c.id, r.ix.Pages[p].URL, r.tok)
		if err != nil {
			return nil, nil, "", 0, err
		}
		cost := tokens + 1
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
	}
	texts := read.context
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
