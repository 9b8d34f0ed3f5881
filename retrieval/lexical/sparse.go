package lexical

import (
	"slices"
)

// SparseQuery returns query as a sparse vector over TermID dimensions whose values are the terms' IDF in this
// corpus (times their repeat count). Its dot product with DocSparse(text) of a document is that document's
// BM25 score, so a sparse-vector store (Qdrant) ranks exactly as Search does. Terms the corpus lacks are left out
// (they score nothing). Indices are sorted ascending and unique.
func (b *BM25) SparseQuery(query string) (indices []uint32, values []float32) {
	m := make(map[uint32]float32)
	b.cfg.Analyzer.each(query, func(term string, _ bool) {
		if t, ok := b.termIndex(term); ok {
			m[TermID(term)] += b.idf[t]
		}
	})
	return sorted(m)
}

// DocSparse returns a document's text as a sparse vector over TermID dimensions whose values are BM25's
// saturated, length-normalised term frequencies tf*(k1+1)/(tf + k1*(1-b+b*|d|/avgdl)), using this corpus's
// average length. Every term of the text is included, known to the corpus or not. Indices are sorted ascending
// and unique (terms whose ids collide are summed).
func (b *BM25) DocSparse(text string) (indices []uint32, values []float32) {
	tf := make(map[string]int)
	dl := 0
	b.cfg.Analyzer.each(text, func(term string, word bool) {
		tf[term]++
		if word {
			dl++
		}
	})
	norm := b.cfg.K1 * (1 - b.cfg.B + b.cfg.B*float64(dl)/b.avgdl)
	m := make(map[uint32]float32, len(tf))
	for term, n := range tf {
		f := float64(n)
		m[TermID(term)] += float32(f * (b.cfg.K1 + 1) / (f + norm))
	}
	return sorted(m)
}

func sorted(m map[uint32]float32) ([]uint32, []float32) {
	indices := make([]uint32, 0, len(m))
	for id := range m {
		indices = append(indices, id)
	}
	slices.Sort(indices)
	values := make([]float32, len(indices))
	for i, id := range indices {
		values[i] = m[id]
	}
	return indices, values
}
