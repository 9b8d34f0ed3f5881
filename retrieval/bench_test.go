package retrieval_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ragproxy/ragproxy/embedding"
	"github.com/ragproxy/ragproxy/eval"
	"github.com/ragproxy/ragproxy/index"
	"github.com/ragproxy/ragproxy/internal/corpustest"
	"github.com/ragproxy/ragproxy/internal/indextest"
	"github.com/ragproxy/ragproxy/retrieval"
	"github.com/ragproxy/ragproxy/tokenizer"
)

// BenchmarkRetrieveBerkeley measures retrieval (what /v1/retrieve does after analysis) on the Berkeley index with
// the dev questions, reporting p50 and p99 per question.
func BenchmarkRetrieveBerkeley(b *testing.B) {
	r, texts := berkeley(b)
	benchRetrieve(b, r, texts)
}

// berkeley is a retriever over the Berkeley index with the dev questions, or skips b.
func berkeley(b *testing.B) (*retrieval.Retriever, []string) {
	corpus := corpustest.Dir(b)
	qs, err := eval.LoadQuestions(corpustest.QuestionsPath(b))
	if err != nil {
		b.Skip(err)
	}
	dir := b.TempDir()
	indextest.Build(b, corpus, corpustest.BaseURL, dir)
	r, _ := indextest.Open(b, dir)
	texts := make([]string, len(qs))
	for i, q := range qs {
		texts[i] = q.Question
	}
	return r, texts
}

// BenchmarkRetrieveSynthetic shows how retrieval time grows with the index: synthetic sites of 1k and 10k pages
// (20 chunks each) with the local embedder.
func BenchmarkRetrieveSynthetic(b *testing.B) {
	for _, pages := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("pages=%d", pages), func(b *testing.B) {
			r, qs := syntheticRetriever(b, pages, 20)
			benchRetrieve(b, r, qs)
		})
	}
}

func benchRetrieve(b *testing.B, r *retrieval.Retriever, questions []string) {
	ctx := context.Background()
	var lat []time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		q := questions[i%len(questions)]
		a, _ := retrieval.Heuristic{}.Analyze(ctx, []retrieval.Message{{Role: "user", Content: q}})
		start := time.Now()
		if _, err := r.Retrieve(ctx, q, a.Rewrites); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[(len(lat)-1)*50/100].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[(len(lat)-1)*99/100].Microseconds())/1000, "p99-ms")
}

// syntheticRetriever builds an in-memory index of random pages over a Zipf-distributed vocabulary.
func syntheticRetriever(b *testing.B, pages, chunksPer int) (*retrieval.Retriever, []string) {
	b.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	vocab := make([]string, 20000)
	for i := range vocab {
		var w strings.Builder
		for j := 0; j < 4+rng.IntN(6); j++ {
			w.WriteByte(byte('a' + rng.IntN(26)))
		}
		vocab[i] = w.String()
	}
	zipf := rand.NewZipf(rng, 1.1, 1, uint64(len(vocab)-1))
	sentence := func(n int) string {
		ws := make([]string, n)
		for i := range ws {
			ws[i] = vocab[zipf.Uint64()]
		}
		return strings.Join(ws, " ")
	}
	ix := &index.Index{}
	var texts []string
	for p := 0; p < pages; p++ {
		pg := index.Page{ID: p, URL: fmt.Sprintf("https://s.example/p%d/", p), Title: sentence(3)}
		for c := 0; c < chunksPer; c++ {
			id := len(ix.Chunks)
			text := "## " + sentence(4) + "\n\n" + sentence(150)
			ix.Chunks = append(ix.Chunks, index.Chunk{ID: id, PageID: p, Ord: c, Text: text, Tokens: 300})
			pg.Chunks = append(pg.Chunks, id)
			texts = append(texts, text)
			pg.Markdown += text + "\n\n"
		}
		pg.Summary = sentence(60)
		pg.Community = p % 37
		ix.Pages = append(ix.Pages, pg)
	}
	emb, vecs, err := embedding.FitEmbed(context.Background(), texts, embedding.LocalConfig{})
	if err != nil {
		b.Fatal(err)
	}
	ix.ChunkVectors = vecs
	sums := make([]string, pages)
	for i, p := range ix.Pages {
		sums[i] = p.Title + "\n" + p.Summary
	}
	if ix.SummaryVectors, err = emb.Embed(context.Background(), sums); err != nil {
		b.Fatal(err)
	}
	ix.Manifest = index.Manifest{Embedder: emb.Name(), Dimension: emb.Dimension(), Pages: pages, Chunks: len(ix.Chunks)}
	tok, _ := tokenizer.New()
	r, err := retrieval.New(ix, emb, tok, retrieval.Config{})
	if err != nil {
		b.Fatal(err)
	}
	qs := make([]string, 50)
	for i := range qs {
		qs[i] = "what about " + sentence(5) + "?"
	}
	return r, qs
}

// BenchmarkRetrieveBerkeleyScoped is BenchmarkRetrieveBerkeley as section assistants: the whole site, then scopes
// of decreasing size (the graduate pages, the graduate degree programmes, one programme's pages), each filtering
// every page and chunk list before ranking. It reports the pages in the scope beside p50 and p99.
func BenchmarkRetrieveBerkeleyScoped(b *testing.B) {
	r, texts := berkeley(b)
	// The prefixes are found in the index's URLs, wherever the mirror's root puts them.
	prefix := func(segment string, deeper int) string {
		for _, p := range r.Index().Pages {
			keys := retrieval.ScopeKeys(p.URL)
			for i, k := range keys {
				if strings.HasPrefix(k, "/") && strings.HasSuffix(k, segment) && i+2*deeper < len(keys) {
					return keys[i+2*deeper]
				}
			}
		}
		b.Fatalf("no page under a %s segment", segment)
		return ""
	}
	scopes := []struct{ name, prefix string }{
		{"whole", ""},
		{"graduate", prefix("/graduate/", 0)},
		{"graduate-programs", prefix("/graduate/degree-programs/", 0)},
		{"one-programme", prefix("/graduate/degree-programs/", 1)},
	}
	for _, sc := range scopes {
		b.Run(sc.name, func(b *testing.B) {
			sr, pages := r, len(r.Index().Pages)
			if sc.prefix != "" {
				s, err := retrieval.NewScope(sc.prefix)
				if err != nil {
					b.Fatal(err)
				}
				sr, pages = r.WithScope(s), 0
				for _, p := range r.Index().Pages {
					if s.Match(p.URL) {
						pages++
					}
				}
			}
			benchRetrieve(b, sr, texts)
			b.ReportMetric(float64(pages), "pages")
		})
	}
}

// BenchmarkEvidenceBerkeley measures what an offline answer adds to retrieval: choosing the units that answer
// from a result's passages (Retriever.Evidence), per question of the Berkeley dev set, reporting p50 and p99.
func BenchmarkEvidenceBerkeley(b *testing.B) {
	r, texts := berkeley(b)
	results := make([]*retrieval.Result, len(texts))
	for i, q := range texts {
		res, err := r.Retrieve(context.Background(), q, nil)
		if err != nil {
			b.Fatal(err)
		}
		results[i] = res
	}
	lat := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		if ev := r.Evidence(results[i%len(results)], 12); len(ev) == 0 {
			b.Fatalf("no evidence for %q", texts[i%len(texts)])
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-us")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-us")
}
