package lexical

import (
	"testing"

	"github.com/ragproxy/ragproxy/internal/corpustest"
)

// TestCorpusPageRetrieval runs the dev questions against BM25 over whole pages and over chunks (a page ranks
// at its best chunk). Whole-page BM25 is the baseline the full pipeline must beat by far; the floor only guards
// the analyzer against regressions.
func TestCorpusPageRetrieval(t *testing.T) {
	pages := corpustest.Pages(t)
	qs := corpustest.Questions(t)
	chunks := corpustest.Chunks(pages, 2600)
	pageDocs := make([]string, len(pages))
	for i, p := range pages {
		pageDocs[i] = p.Title + "\n" + p.Text
	}
	chunkDocs := make([]string, len(chunks))
	for i, c := range chunks {
		chunkDocs[i] = c.Text
	}
	byPage := NewBM25(pageDocs, Config{})
	byChunk := NewBM25(chunkDocs, Config{})
	score := func(rank func(q string) []int) (hit8, mrr float64) {
		for _, q := range qs {
			for r, p := range rank(q.Question) {
				if pages[p].Path == q.ExpectedURLs[0] {
					if r < 8 {
						hit8++
					}
					mrr += 1 / float64(r+1)
					break
				}
			}
		}
		return hit8 / float64(len(qs)), mrr / float64(len(qs))
	}
	pageHit, pageMRR := score(func(q string) []int {
		var out []int
		for _, h := range byPage.Search(q, 100, nil) {
			out = append(out, h.Doc)
		}
		return out
	})
	chunkHit, chunkMRR := score(func(q string) []int {
		var out []int
		seen := map[int]bool{}
		for _, h := range byChunk.Search(q, 500, nil) {
			if p := chunks[h.Doc].Page; !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
		}
		return out
	})
	t.Logf("%d questions: BM25 over %d pages Hit@8 %.3f MRR %.3f; over %d chunks Hit@8 %.3f MRR %.3f",
		len(qs), len(pages), pageHit, pageMRR, len(chunks), chunkHit, chunkMRR)
	if pageHit < 0.5 || chunkHit < 0.5 {
		t.Errorf("BM25 page Hit@8 %.3f (pages), %.3f (chunks), want >= 0.5", pageHit, chunkHit)
	}
}
