package retrieval

import (
	"slices"
	"strconv"
	"strings"

	"github.com/ragproxy/ragproxy/retrieval/lexical"
)

// sameQueryLists finds the queries whose searches return the same lists, so each search runs once. Rewrites
// often differ from the question only in words the searches ignore: "who is in charge of cog sci?" and its key
// terms "charge cog sci" have the same BM25 terms and, with the local embedder, the same vector. The duplicate
// lists still take part in fusion; only the work is shared.
type sameQueryLists struct {
	vec        []int // query -> index in uniqueVecs
	uniqueVecs [][]float32
	terms      []string // query -> its BM25 terms, space-joined
}

// listKey names one search: a list and the signature of the query it ran.
type listKey struct {
	list string
	sig  string
}

func sameQueries(queries []string, vecs [][]float32) sameQueryLists {
	s := sameQueryLists{vec: make([]int, len(queries)), terms: make([]string, len(queries))}
	for i, v := range vecs {
		j := slices.IndexFunc(s.uniqueVecs, func(u []float32) bool { return slices.Equal(u, v) })
		if j < 0 {
			j = len(s.uniqueVecs)
			s.uniqueVecs = append(s.uniqueVecs, v)
		}
		s.vec[i] = j
	}
	var an lexical.Analyzer
	for i, q := range queries {
		s.terms[i] = strings.Join(an.Terms(q), " ")
	}
	return s
}

// key is the signature of query qi for list: its vector for dense lists, its terms for BM25 lists, the text
// itself for title matching.
func (s sameQueryLists) key(list string, qi int) listKey {
	switch list {
	case ListSummaryDense, ListChunkDense:
		return listKey{list, "vec:" + strconv.Itoa(s.vec[qi])}
	case ListPageBM25, ListChunkBM25, ListTitleBM25:
		return listKey{list, s.terms[qi]}
	}
	return listKey{list, "query:" + strconv.Itoa(qi)}
}
