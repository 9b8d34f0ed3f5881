package qdrant

import (
	"hash/fnv"
	"slices"

	"github.com/ragproxy/ragproxy/retrieval/lexical"
)

// BM25 parameters of the default encoder (Robertson and Zaragoza's usual values).
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// SparseEncoder turns a document into a sparse vector of BM25 term weights, indices ascending and unique.
// avgLen is the average document length, in terms, of the collection the document goes into.
type SparseEncoder func(text string, avgLen float64) (indices []uint32, values []float32)

// Terms are the terms BM25Document and BM25Query weigh: those of the in-process BM25 (lexical.Analyzer's words,
// stopwords dropped, Porter stems), so a search through Qdrant matches the same words as one in process.
func Terms(text string) []string { return lexical.Analyzer{}.Terms(text) }

// termID maps a term to its sparse index: 32-bit FNV-1a, so no vocabulary has to be stored or shared between
// ingest and query time. Colliding terms share a weight.
func termID(term string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(term))
	return h.Sum32()
}

// BM25Document returns the BM25 term-frequency part of each term's weight,
// tf·(k1+1) / (tf + k1·(1 − b + b·len/avgLen)). Qdrant multiplies in the IDF itself (the collection's sparse
// vector has the IDF modifier), so the dot product with a BM25Query vector is the document's BM25 score.
func BM25Document(text string, avgLen float64) ([]uint32, []float32) {
	terms := Terms(text)
	if len(terms) == 0 {
		return nil, nil
	}
	tf := map[uint32]float64{}
	for _, t := range terms {
		tf[termID(t)]++
	}
	norm := 1.0
	if avgLen > 0 {
		norm = 1 - bm25B + bm25B*float64(lexical.Analyzer{}.Length(text))/avgLen
	}
	return sortedSparse(tf, func(f float64) float64 { return f * (bm25K1 + 1) / (f + bm25K1*norm) })
}

// BM25Query weighs each distinct term of the query by its repeats, as the in-process BM25 counts a repeated
// query term once per repeat.
func BM25Query(text string) ([]uint32, []float32) {
	terms := Terms(text)
	if len(terms) == 0 {
		return nil, nil
	}
	qtf := map[uint32]float64{}
	for _, t := range terms {
		qtf[termID(t)]++
	}
	return sortedSparse(qtf, func(f float64) float64 { return f })
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
