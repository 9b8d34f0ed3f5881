package lexical

import (
	"fmt"
	"testing"

	"github.com/ragproxy/ragproxy/internal/corpustest"
)

// corpusDocs returns the Berkeley corpus as about 16k chunks (the real chunker's count) or as its 780 pages.
func corpusDocs(b *testing.B, chunks bool) []string {
	pages := corpustest.Pages(b)
	var docs []string
	if chunks {
		for _, c := range corpustest.Chunks(pages, 2600) {
			docs = append(docs, c.Text)
		}
		return docs
	}
	for _, p := range pages {
		docs = append(docs, p.Title+"\n"+p.Text)
	}
	return docs
}

func BenchmarkNewBM25(b *testing.B) {
	for _, chunks := range []bool{false, true} {
		docs := corpusDocs(b, chunks)
		b.Run(fmt.Sprintf("docs=%d", len(docs)), func(b *testing.B) {
			b.ReportAllocs()
			start := corpustest.CPUTime()
			for b.Loop() {
				NewBM25(docs, Config{})
			}
			corpustest.ReportCPU(b, start)
		})
	}
}

// BenchmarkSearch runs the dev questions against the chunk index, unfiltered and restricted to about 8 pages'
// chunks as retrieval's chunk stage does.
func BenchmarkSearch(b *testing.B) {
	pages := corpustest.Pages(b)
	chunks := corpustest.Chunks(pages, 2600)
	docs := make([]string, len(chunks))
	for i, c := range chunks {
		docs[i] = c.Text
	}
	idx := NewBM25(docs, Config{})
	var qs []string
	for _, q := range corpustest.Questions(b) {
		qs = append(qs, q.Question)
	}
	inPages := func(d int) bool { return chunks[d].Page%97 < 8 }
	for _, tc := range []struct {
		name   string
		k      int
		filter func(int) bool
	}{{"top36", 36, nil}, {"top128-filtered", 128, inPages}} {
		b.Run(fmt.Sprintf("%s/docs=%d", tc.name, len(docs)), func(b *testing.B) {
			b.ReportAllocs()
			start := corpustest.CPUTime()
			i := 0
			for b.Loop() {
				idx.Search(qs[i%len(qs)], tc.k, tc.filter)
				i++
			}
			corpustest.ReportCPU(b, start)
		})
	}
}

// BenchmarkSparseQuery is the cost of building a Qdrant sparse query vector.
func BenchmarkSparseQuery(b *testing.B) {
	idx := NewBM25(corpusDocs(b, false), Config{})
	b.ReportAllocs()
	for b.Loop() {
		idx.SparseQuery("hw many upper div units for bioengineering bs")
	}
}
