package lexical

import (
	"fmt"
	"os"
	"path/filepath"
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

// BenchmarkBM25Build is the cost of indexing the corpus (NewBM25); BenchmarkBM25Load is that of reading the
// index back from its binary form instead.
func BenchmarkBM25Build(b *testing.B) {
	for _, chunks := range []bool{false, true} {
		docs := corpusDocs(b, chunks)
		b.Run(fmt.Sprintf("docs=%d", len(docs)), func(b *testing.B) {
			b.ReportAllocs()
			start := corpustest.CPUTime()
			var idx *BM25
			for b.Loop() {
				idx = NewBM25(docs, Config{})
			}
			corpustest.ReportCPU(b, start)
			b.ReportMetric(float64(idx.memSize()), "index-bytes")
		})
	}
}

// BenchmarkBM25Load reads the index from a buffer in place (aligned), from one it must copy (not aligned), and
// from a file (os.ReadFile, then in place). encoded-bytes is the binary form's size, index-bytes the read index's
// own memory (not counting data it uses in place).
func BenchmarkBM25Load(b *testing.B) {
	for _, chunks := range []bool{false, true} {
		docs := corpusDocs(b, chunks)
		enc, err := NewBM25(docs, Config{}).MarshalBinary()
		if err != nil {
			b.Fatal(err)
		}
		unaligned := make([]byte, len(enc)+1)[1:]
		copy(unaligned, enc)
		file := filepath.Join(b.TempDir(), "bm25.bin")
		if err := os.WriteFile(file, enc, 0o644); err != nil {
			b.Fatal(err)
		}
		for _, tc := range []struct {
			name string
			read func() (*BM25, error)
		}{
			{"in-place", func() (*BM25, error) { return ReadBM25(enc) }},
			{"copy", func() (*BM25, error) { return ReadBM25(unaligned) }},
			{"file", func() (*BM25, error) {
				data, err := os.ReadFile(file)
				if err != nil {
					return nil, err
				}
				return ReadBM25(data)
			}},
		} {
			b.Run(fmt.Sprintf("docs=%d/%s", len(docs), tc.name), func(b *testing.B) {
				b.ReportAllocs()
				start := corpustest.CPUTime()
				var idx *BM25
				for b.Loop() {
					if idx, err = tc.read(); err != nil {
						b.Fatal(err)
					}
				}
				corpustest.ReportCPU(b, start)
				b.ReportMetric(float64(len(enc)), "encoded-bytes")
				if tc.name == "copy" {
					b.ReportMetric(float64(idx.memSize()), "index-bytes")
				}
			})
		}
	}
}

// memSize is the memory of b's arrays and term text.
func (b *BM25) memSize() int {
	return 4*(cap(b.idf)+cap(b.offs)+cap(b.termOffs)+cap(b.docs)+cap(b.impact)) + len(b.termText)
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
