package vector

import (
	"context"
	"fmt"
	"testing"

	"github.com/ragproxy/ragproxy/embedding"
	"github.com/ragproxy/ragproxy/internal/corpustest"
)

// benchDim is the local embedder's default dimension.
const benchDim = 1024

var benchSizes = []int{1_000, 10_000, 100_000}

// fixtures caches generated collections across sub-benchmarks of one run (generation and HNSW builds are the
// expensive part; the searches are what is measured).
type fixture struct {
	rows, queries [][]float32
	flat          *Flat
	hnsw          *HNSW
}

var fixtures = map[int]*fixture{}

func getFixture(b *testing.B, n int, withHNSW bool) *fixture {
	f, ok := fixtures[n]
	if !ok {
		rows, queries := clustered(int64(n), n, 200, benchDim)
		flat, err := NewFlat(rows)
		if err != nil {
			b.Fatal(err)
		}
		f = &fixture{rows: rows, queries: queries, flat: flat}
		fixtures[n] = f
	}
	if withHNSW && f.hnsw == nil {
		start := corpustest.CPUTime()
		h, err := NewHNSW(f.rows, HNSWConfig{})
		if err != nil {
			b.Fatal(err)
		}
		b.Logf("HNSW build over %d vectors of %d: %.1f s CPU", n, benchDim, float64(corpustest.CPUTime()-start)/1e9)
		f.hnsw = h
	}
	return f
}

func benchSearch(b *testing.B, idx Index, queries [][]float32, filter func(int) bool) {
	b.ReportAllocs()
	b.ResetTimer()
	start := corpustest.CPUTime()
	i := 0
	for b.Loop() {
		idx.Search(queries[i%len(queries)], 10, filter)
		i++
	}
	corpustest.ReportCPU(b, start)
}

// BenchmarkFlat is exact top-10 search over clustered unit vectors of the embedder's dimension.
func BenchmarkFlat(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			f := getFixture(b, n, false)
			benchSearch(b, f.flat, f.queries, nil)
		})
	}
}

// BenchmarkHNSW is approximate top-10 search on the same collections, reporting recall@10 against Flat.
func BenchmarkHNSW(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			f := getFixture(b, n, true)
			benchSearch(b, f.hnsw, f.queries, nil)
			b.ReportMetric(recallAt(f.hnsw, f.rows, f.queries[:50], 10, nil), "recall@10")
			b.ReportMetric(recallAt(f.hnsw, f.rows, f.queries[:50], 40, nil), "recall@40")
		})
	}
}

// BenchmarkFlatSearchIDs searches only the chunks of a few pages, as retrieval's chunk stage does
// (8 pages of about 20 chunks).
func BenchmarkFlatSearchIDs(b *testing.B) {
	f := getFixture(b, 10_000, false)
	ids := make([]int, 160)
	for i := range ids {
		ids[i] = i * 61 % 10_000
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		f.flat.SearchIDs(f.queries[i%len(f.queries)], 128, ids)
		i++
	}
}

// BenchmarkCorpus searches the local embedder's vectors of the Berkeley corpus chunks (about 16k), real data
// for HNSW's recall.
func BenchmarkCorpus(b *testing.B) {
	pages := corpustest.Pages(b)
	chunks := corpustest.Chunks(pages, 2600)
	texts := make([]string, len(chunks))
	for i, c := range chunks {
		texts[i] = c.Text
	}
	e := embedding.FitLocal(texts, embedding.LocalConfig{})
	rows, err := e.Embed(context.Background(), texts)
	if err != nil {
		b.Fatal(err)
	}
	queries := embedQuestions(b, e)
	flat, _ := NewFlat(rows)
	b.Run(fmt.Sprintf("flat/n=%d", len(rows)), func(b *testing.B) { benchSearch(b, flat, queries, nil) })
	start := corpustest.CPUTime()
	h, err := NewHNSW(rows, HNSWConfig{})
	if err != nil {
		b.Fatal(err)
	}
	build := float64(corpustest.CPUTime()-start) / 1e9
	b.Run(fmt.Sprintf("hnsw/n=%d/dim=%d", len(rows), len(rows[0])), func(b *testing.B) {
		benchSearch(b, h, queries, nil)
		b.ReportMetric(recallAt(h, rows, queries, 10, nil), "recall@10")
		b.ReportMetric(recallAt(h, rows, queries, 40, nil), "recall@40")
		b.ReportMetric(build, "build-cpu-s")
	})
}
