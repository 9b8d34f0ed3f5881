package embedding

import (
	"context"
	"os"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/ragproxy/ragproxy/internal/corpustest"
)

// corpusChunkChars gives about 15k chunks over the Berkeley corpus's 40 MB of main-content text, the count the
// real chunker produces.
const corpusChunkChars = 2600

// pageRanking ranks pages for each question by their best chunk's cosine similarity and returns Hit@8 and MRR.
func pageRanking(t testing.TB, e Embedder, chunks []corpustest.Chunk, pages []corpustest.Page, qs []corpustest.Question) (hit8, mrr float64) {
	texts := make([]string, len(chunks))
	for i, c := range chunks {
		texts[i] = pages[c.Page].Title + "\n" + c.Text
	}
	ctx := context.Background()
	vecs, err := e.Embed(ctx, texts)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range qs {
		qv, err := e.Embed(ctx, []string{q.Question})
		if err != nil {
			t.Fatal(err)
		}
		best := make(map[int]float64)
		for i, v := range vecs {
			s := dot(qv[0], v)
			if p := chunks[i].Page; s > best[p] {
				best[p] = s
			}
		}
		order := make([]int, 0, len(best))
		for p := range best {
			order = append(order, p)
		}
		sort.Slice(order, func(i, j int) bool {
			if best[order[i]] != best[order[j]] {
				return best[order[i]] > best[order[j]]
			}
			return order[i] < order[j]
		})
		for r, p := range order {
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

// TestLocalCorpusRetrieval checks dense-only page retrieval on the dev questions: the local embedder alone must
// find most answering pages (the full pipeline adds BM25, rewrites and summaries on top). Set
// RAGPROXY_EMBED_SWEEP=1 to log a sweep over the embedder's settings.
func TestLocalCorpusRetrieval(t *testing.T) {
	pages := corpustest.Pages(t)
	qs := corpustest.Questions(t)
	chunks := corpustest.Chunks(pages, corpusChunkChars)
	texts := make([]string, len(chunks))
	for i, c := range chunks {
		texts[i] = c.Text
	}
	configs := []LocalConfig{{}}
	if os.Getenv("RAGPROXY_EMBED_SWEEP") != "" {
		configs = nil
		for _, s := range strings.Split(os.Getenv("RAGPROXY_EMBED_SWEEP"), ";") {
			f := strings.Split(s, ",") // dim,min,max,weight,hashes
			n := func(i int) int { v, _ := strconv.Atoi(f[i]); return v }
			w, _ := strconv.ParseFloat(f[3], 32)
			configs = append(configs, LocalConfig{Dimension: n(0), MinGram: n(1), MaxGram: n(2), GramWeight: float32(w), Hashes: n(4)})
		}
	}
	for _, cfg := range configs {
		l := FitLocal(texts, cfg)
		hit8, mrr := pageRanking(t, l, chunks, pages, qs)
		t.Logf("%s over %d chunks, %d questions: page Hit@8 %.3f, MRR %.3f", l.Name(), len(chunks), len(qs), hit8, mrr)
		if reflect.DeepEqual(cfg, LocalConfig{}) && hit8 < 0.6 {
			t.Errorf("default local embedder: page Hit@8 %.3f, want >= 0.6", hit8)
		}
	}
}
