package lexical

import (
	"slices"
)

// The sparse vectors below are BM25 split in two, so that a sparse-vector store (Qdrant) ranks as Search does:
// a document's vector holds each term's saturated, length-normalised frequency, a query's each term's repeats,
// and the store multiplies in each term's IDF (Qdrant's IDF modifier uses the same idf as BM25 here). Dimensions
// are TermIDs, so no vocabulary is stored or shared between ingest and query time; terms whose ids collide
// share a dimension. Indices are sorted ascending and unique.

// SparseDocument returns text as a sparse vector of BM25's term-frequency part,
// tf*(k1+1)/(tf + k1*(1-b+b*|d|/avgLen)), with c's K1 and B (their defaults when unset) and |d| in c's Analyzer's
// Length. avgLen is the average length of the collection the document goes into; avgLen <= 0 leaves length out
// (as if |d| were average). Every term of the text is included. Text without terms gives nil vectors.
func (c Config) SparseDocument(text string, avgLen float64) (indices []uint32, values []float32) {
	c = c.withDefaults()
	tf := c.termCounts(text)
	if tf == nil {
		return nil, nil
	}
	norm := 1.0
	if avgLen > 0 {
		norm = 1 - c.B + c.B*float64(c.Analyzer.Length(text))/avgLen
	}
	return sortedSparse(tf, func(f float64) float64 { return f * (c.K1 + 1) / (f + c.K1*norm) })
}

// SparseQuery returns query as a sparse vector of its terms' repeat counts, as Search counts a repeated query
// term once per repeat. Text without terms gives nil vectors.
func (c Config) SparseQuery(query string) (indices []uint32, values []float32) {
	tf := c.termCounts(query)
	if tf == nil {
		return nil, nil
	}
	return sortedSparse(tf, func(f float64) float64 { return f })
}

// termCounts counts the terms of text by TermID; nil when it has none.
func (c Config) termCounts(text string) map[uint32]float64 {
	var tf map[uint32]float64
	c.Analyzer.each(text, func(term string, _ bool) {
		if tf == nil {
			tf = map[uint32]float64{}
		}
		tf[TermID(term)]++
	})
	return tf
}

// SparseQuery returns query as a sparse vector over TermID dimensions whose values are the terms' IDF in this
// corpus times their repeat count (Config.SparseQuery weighted as a store with an IDF modifier weighs it). Its
// dot product with DocSparse(text) of a document is that document's BM25 score. Terms the corpus lacks are left
// out (they score nothing).
func (b *BM25) SparseQuery(query string) (indices []uint32, values []float32) {
	m := make(map[uint32]float64)
	b.cfg.Analyzer.each(query, func(term string, _ bool) {
		if t, ok := b.termIndex(term); ok {
			m[TermID(term)] += float64(b.idf[t])
		}
	})
	return sortedSparse(m, func(w float64) float64 { return w })
}

// DocSparse returns a document's text as Config.SparseDocument does, with this corpus's K1, B, analyzer and
// average length.
func (b *BM25) DocSparse(text string) (indices []uint32, values []float32) {
	return b.cfg.SparseDocument(text, b.avgdl)
}

func sortedSparse(m map[uint32]float64, weight func(float64) float64) ([]uint32, []float32) {
	idx := make([]uint32, 0, len(m))
	for k := range m {
		idx = append(idx, k)
	}
	slices.Sort(idx)
	val := make([]float32, len(idx))
	for i, k := range idx {
		val[i] = float32(weight(m[k]))
	}
	return idx, val
}
