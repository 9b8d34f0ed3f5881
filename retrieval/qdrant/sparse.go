package qdrant

import (
	"github.com/ragproxy/ragproxy/retrieval/lexical"
)

// SparseEncoder turns a document into a sparse vector of BM25 term weights, indices ascending and unique.
// avgLen is the average document length, in terms, of the collection the document goes into.
type SparseEncoder func(text string, avgLen float64) (indices []uint32, values []float32)

// documentVector is the default SparseEncoder: the in-process BM25's own (lexical.Config.SparseDocument with its
// defaults), so a search through Qdrant matches and weighs the same terms as one in process. Qdrant multiplies
// in the IDF itself (the collections' sparse vector has the IDF modifier).
func documentVector(text string, avgLen float64) ([]uint32, []float32) {
	return lexical.Config{}.SparseDocument(text, avgLen)
}

// queryVector encodes a query to match documentVector: each term's repeats (lexical.Config.SparseQuery).
func queryVector(text string) ([]uint32, []float32) { return lexical.Config{}.SparseQuery(text) }

// averageTerms returns the average length of texts, in the terms BM25 normalises by (lexical.Analyzer.Length).
func averageTerms(texts func(yield func(string) bool)) float64 {
	n, total := 0, 0
	for t := range texts {
		n++
		total += lexical.Analyzer{}.Length(t)
	}
	if n == 0 {
		return 0
	}
	return float64(total) / float64(n)
}
