package lexical

import (
	"container/heap"
	"math"
	"slices"
	"sort"
	"sync"

	"github.com/ragproxy/ragproxy/textnorm"
)

// Config configures a BM25 index. The zero value selects the usual Okapi parameters.
type Config struct {
	// K1 controls term-frequency saturation. Default 1.2.
	K1 float64
	// B controls document-length normalisation, from 0 (none) to 1 (full). Default 0.75; a negative value
	// means 0.
	B float64
	// Analyzer turns documents and queries into terms. Default: the zero Analyzer.
	Analyzer Analyzer
	// Lang gives the language (a BCP 47 tag) of document i, which chooses its analysis: English, for a tag
	// that textnorm.IsEnglish accepts, takes Analyzer's; any other language textnorm.LanguageOf's. Default
	// nil: every document is English.
	Lang func(doc int) string
}

func (c Config) withDefaults() Config {
	if c.K1 <= 0 {
		c.K1 = 1.2
	}
	switch {
	case c.B == 0:
		c.B = 0.75
	case c.B < 0:
		c.B = 0
	case c.B > 1:
		c.B = 1
	}
	return c
}

// Hit is one search result: a document's position in the slice the index was built from, and its BM25 score.
type Hit struct {
	Doc   int
	Score float64
}

// BM25 is an Okapi BM25 index: score(q, d) = sum over query terms t of
// idf(t) * tf(t,d)*(k1+1) / (tf(t,d) + k1*(1-b+b*|d|/avgdl)), with idf(t) = ln(1 + (N-df+0.5)/(df+0.5))
// (Robertson and Zaragoza 2009; the non-negative idf Lucene uses). Each posting stores its precomputed term
// weight, so a search is one pass over the query terms' posting lists.
//
// Terms are numbered in sorted order and kept as one string with an offset table, looked up by binary search:
// far smaller than a map of strings, and a query has only a few terms to look up.
type BM25 struct {
	cfg      Config
	n        int
	avgdl    float64
	termText string    // the terms, sorted and concatenated
	termOffs []uint32  // term t is termText[termOffs[t]:termOffs[t+1]]
	idf      []float32 // idf of term t
	offs     []int32   // postings of term t are docs[offs[t]:offs[t+1]], impacts likewise
	docs     []int32   // ascending within a term's postings
	impact   []float32 // idf(t) * saturated tf
	pool     sync.Pool // *accumulator
	// langs, set by SetLanguages for documents in several languages, names each language's group; langN holds
	// each group's number of documents and langDF, per group and term, the number of the group's documents
	// holding the term.
	langs  []string
	langN  []int
	langDF [][]int32
}

type accumulator struct {
	score   []float32
	touched []int32
}

// NewBM25 indexes docs; document i is Hit.Doc i.
func NewBM25(docs []string, cfg Config) *BM25 {
	return NewBM25Func(len(docs), func(i int) string { return docs[i] }, cfg)
}

// NewBM25Func indexes n documents, asking doc for each once, in order: a caller that composes the texts need
// not hold them all.
func NewBM25Func(n int, doc func(i int) string, cfg Config) *BM25 {
	return IndexFunc(n, doc, cfg).BM25()
}

func (b *BM25) initPool() {
	b.pool.New = func() any { return &accumulator{score: make([]float32, b.n)} }
}

// termIndex returns the index of term, or false when the corpus lacks it.
func (b *BM25) termIndex(term string) (int32, bool) {
	lo, hi := 0, len(b.idf) // invariant: terms before lo sort below term, terms from hi on do not
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if b.termText[b.termOffs[m]:b.termOffs[m+1]] < term {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo < len(b.idf) && b.termText[b.termOffs[lo]:b.termOffs[lo+1]] == term {
		return int32(lo), true
	}
	return 0, false
}

// Has reports whether term is one of the index's terms: the vocabulary that compound splitting looks parts up in.
func (b *BM25) Has(term string) bool {
	_, ok := b.termIndex(term)
	return ok
}

// Len returns the number of documents.
func (b *BM25) Len() int { return b.n }

// Terms returns the number of distinct terms.
func (b *BM25) Terms() int { return len(b.idf) }

// queryTerms returns the indexed terms of query, analysed as lang's text, with their repeat counts, in
// first-occurrence order.
func (b *BM25) queryTerms(lang, query string) (terms []int32, qtf []float32) {
	add := func(term string, weight float32) {
		t, ok := b.termIndex(term)
		if !ok {
			return
		}
		if i := slices.Index(terms, t); i >= 0 {
			qtf[i] += weight
			return
		}
		terms = append(terms, t)
		qtf = append(qtf, weight)
	}
	if l := textnorm.LanguageOf(lang); l != nil {
		b.cfg.Analyzer.eachLang(l, query, func(term string) bool { _, ok := b.termIndex(term); return ok }, add)
	} else {
		b.cfg.Analyzer.each(query, func(term string, _ bool) { add(term, 1) })
	}
	return terms, qtf
}

// SetLanguages tells the index its documents' languages (lang(doc), a BCP 47 tag; English tags are one
// language), for SearchLang and SearchInLang to weigh a query's terms by their idf among the documents in the
// query's language rather than among all: on a site in several languages, the commands and names that every
// translation repeats have a document frequency several times that of the words of one language, which makes
// them weigh less than they do on the site in one language. Documents in one language (or lang nil) leave the
// index as it is. Call it before searching, not concurrently with it.
func (b *BM25) SetLanguages(lang func(doc int) string) {
	b.langs, b.langN, b.langDF = nil, nil, nil
	if lang == nil || b.n == 0 {
		return
	}
	groups := map[string]int{}
	of := make([]int32, b.n)
	var names []string
	for d := range b.n {
		g := langGroup(lang(d))
		i, ok := groups[g]
		if !ok {
			i = len(names)
			groups[g] = i
			names = append(names, g)
		}
		of[d] = int32(i)
	}
	if len(names) < 2 {
		return
	}
	n := make([]int, len(names))
	for _, g := range of {
		n[g]++
	}
	df := make([][]int32, len(names))
	for g := range df {
		df[g] = make([]int32, len(b.idf))
	}
	for t := range b.idf {
		for _, d := range b.docs[b.offs[t]:b.offs[t+1]] {
			df[of[d]][t]++
		}
	}
	b.langs, b.langN, b.langDF = names, n, df
}

// langGroup is the language a tag belongs to for SetLanguages: "en" for English tags and "", else its base.
func langGroup(tag string) string {
	if tag == "" || textnorm.IsEnglish(tag) {
		return "en"
	}
	return textnorm.Base(tag)
}

// weights are the query terms' weights, their repeat counts times the ratio of their idf among the documents in
// the query's language to their idf among all (see SetLanguages).
func (b *BM25) weights(lang string, terms []int32, qtf []float32) []float32 {
	if b.langDF == nil {
		return qtf
	}
	g := slices.Index(b.langs, langGroup(lang))
	if g < 0 {
		return qtf
	}
	for i, t := range terms {
		if b.idf[t] > 0 {
			qtf[i] *= float32(idf(b.langN[g], int(b.langDF[g][t])) / float64(b.idf[t]))
		}
	}
	return qtf
}

// LanguageFit is how usual text's words are in the documents in lang (see SetLanguages): the sum over its words'
// terms in lang's analysis (its stopwords left out) of the log of the share of lang's documents holding the term,
// a term none of them holds counting as half a document of the whole index. Of two readings of a short question
// the better fit is the language the site writes its words in. ok is false when the index has no documents in
// lang, or its documents are in one language.
func (b *BM25) LanguageFit(lang, text string) (fit float64, ok bool) {
	g := slices.Index(b.langs, langGroup(lang))
	if g < 0 || b.langN[g] == 0 {
		return 0, false
	}
	add := func(term string) {
		share := 0.5 / float64(b.n)
		if t, ok := b.termIndex(term); ok && b.langDF[g][t] > 0 {
			share = float64(b.langDF[g][t]) / float64(b.langN[g])
		}
		fit += math.Log(share)
	}
	if l := textnorm.LanguageOf(lang); l != nil {
		opt := b.cfg.Analyzer.options()
		textnorm.AppendWords(nil, l.Normalize(text), func(w []byte) bool {
			l.WordTerms(string(w), opt, add)
			return true
		})
	} else {
		textnorm.AppendWords(nil, text, func(w []byte) bool {
			if t := b.cfg.Analyzer.term(w); t != "" {
				add(t)
			}
			return true
		})
	}
	return fit, true
}

// Search returns the k best documents for query with a positive score, best first (ties by document order).
// A repeated query term counts once per repeat. When filter is not nil, only documents for which it returns
// true are considered; it is called once per matching document.
func (b *BM25) Search(query string, k int, filter func(doc int) bool) []Hit {
	return b.SearchLang("", query, k, filter)
}

// SearchLang is Search with the query analysed as text in the language lang (a BCP 47 tag; "" and English
// tags take the English analysis, as Search does).
func (b *BM25) SearchLang(lang, query string, k int, filter func(doc int) bool) []Hit {
	if k <= 0 {
		return nil
	}
	terms, qtf := b.queryTerms(lang, query)
	if len(terms) == 0 {
		return nil
	}
	qtf = b.weights(lang, terms, qtf)
	acc := b.pool.Get().(*accumulator)
	defer b.pool.Put(acc)
	score := acc.score
	for i, t := range terms {
		w := qtf[i]
		lo, hi := b.offs[t], b.offs[t+1]
		docs, imp := b.docs[lo:hi], b.impact[lo:hi]
		for j, d := range docs {
			if score[d] == 0 {
				acc.touched = append(acc.touched, d)
			}
			score[d] += w * imp[j]
		}
	}
	h := make(hitHeap, 0, min(k, len(acc.touched)))
	for _, d := range acc.touched {
		s := score[d]
		score[d] = 0
		if filter != nil && !filter(int(d)) {
			continue
		}
		hit := Hit{Doc: int(d), Score: float64(s)}
		if len(h) < k {
			heap.Push(&h, hit)
		} else if worse(h[0], hit) {
			h[0] = hit
			heap.Fix(&h, 0)
		}
	}
	acc.touched = acc.touched[:0]
	out := []Hit(h)
	sort.Slice(out, func(i, j int) bool { return worse(out[j], out[i]) })
	return out
}

// SearchIn is Search over the documents docs (ascending, no repeats) alone, with the same scores: for a search
// inside a few pages, whose chunks are a few hundred of a large site's, it looks up each document in the query
// terms' posting lists instead of reading the lists whole.
func (b *BM25) SearchIn(query string, k int, docs []int) []Hit {
	return b.SearchInLang("", query, k, docs)
}

// SearchInLang is SearchIn with the query analysed as text in the language lang (see SearchLang).
func (b *BM25) SearchInLang(lang, query string, k int, docs []int) []Hit {
	if k <= 0 || len(docs) == 0 {
		return nil
	}
	terms, qtf := b.queryTerms(lang, query)
	if len(terms) == 0 {
		return nil
	}
	qtf = b.weights(lang, terms, qtf)
	score := make([]float32, len(docs))
	for i, t := range terms {
		w := qtf[i]
		lo, hi := b.offs[t], b.offs[t+1]
		list, imp := b.docs[lo:hi], b.impact[lo:hi]
		at := 0
		for j, d := range docs {
			// Both are ascending: search the rest of the list.
			n, found := slices.BinarySearch(list[at:], int32(d))
			at += n
			if at == len(list) {
				break
			}
			if found {
				score[j] += w * imp[at]
			}
		}
	}
	h := make(hitHeap, 0, k)
	for j, s := range score {
		if s == 0 {
			continue
		}
		hit := Hit{Doc: docs[j], Score: float64(s)}
		if len(h) < k {
			heap.Push(&h, hit)
		} else if worse(h[0], hit) {
			h[0] = hit
			heap.Fix(&h, 0)
		}
	}
	out := []Hit(h)
	sort.Slice(out, func(i, j int) bool { return worse(out[j], out[i]) })
	return out
}

// worse reports whether a ranks below b: a lower score, or an equal score and a later document.
func worse(a, b Hit) bool {
	if a.Score != b.Score {
		return a.Score < b.Score
	}
	return a.Doc > b.Doc
}

// hitHeap is a min-heap by rank: the root is the worst hit kept.
type hitHeap []Hit

func (h hitHeap) Len() int           { return len(h) }
func (h hitHeap) Less(i, j int) bool { return worse(h[i], h[j]) }
func (h hitHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *hitHeap) Push(x any)        { *h = append(*h, x.(Hit)) }
func (h *hitHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
