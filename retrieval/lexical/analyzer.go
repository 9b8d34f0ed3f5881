// Package lexical is an in-memory Okapi BM25 index over a fixed set of documents, with the analyzer that turns
// text into index terms and the term statistics a sparse-vector store (Qdrant) needs to reproduce its scores.
//
// A BM25 is immutable once built and safe for concurrent searches.
package lexical

import (
	"hash/fnv"

	"github.com/ragproxy/ragproxy/textnorm"
)

// Analyzer turns text into index terms: textnorm.Words (lowercase; numbers such as "3.70", "510-642-1483" and
// "$13,510" and abbreviations such as "l&s" kept whole), English stopwords removed, Porter stems. The zero value
// is the default analyzer. An Analyzer is safe for concurrent use.
type Analyzer struct {
	// KeepStopwords keeps English stopwords as terms. Default false.
	KeepStopwords bool
	// NoStem indexes words as they are instead of their Porter stems. Default false.
	NoStem bool
	// NoCompounds leaves the compounds of the languages that write them as one word (German, Dutch, the
	// Scandinavian languages) whole instead of adding their parts as terms. Default false. English is not
	// touched.
	NoCompounds bool
	// NoBigrams keeps a run of Chinese, Japanese or Korean characters as one term instead of its overlapping
	// character bigrams. Default false. English is not touched.
	NoBigrams bool
}

// options are a's switches as a Language's analysis takes them.
func (a Analyzer) options() textnorm.Options {
	return textnorm.Options{KeepStopwords: a.KeepStopwords, NoStem: a.NoStem, NoCompounds: a.NoCompounds,
		NoBigrams: a.NoBigrams}
}

// eachLang calls fn with each term of text in language l (not English) and its weight: its words' terms in
// order, then the parts of its compounds that Decompound finds against known, then its code names. A word's or
// code name's weight is 1; the parts of a compound share one word's weight, since they are another spelling of
// that one word ("Tastaturbelegung" as "Tastatur" and "Belegung"), not more words of the question. At a weight of
// 1 each, a question's compound counted as three words, and its common parts ("Text" of "Textkonsole") outweighed
// its rarer words (German MRR on the Debian Handbook 0.712, on the Debian Reference 0.865; sharing: 0.757 and
// 0.896).
func (a Analyzer) eachLang(l *textnorm.Language, text string, known func(term string) bool,
	fn func(term string, weight float32)) {
	opt := a.options()
	text = l.Normalize(text)
	textnorm.AppendWords(nil, text, func(w []byte) bool {
		word := string(w)
		l.WordTerms(word, opt, func(t string) { fn(t, 1) })
		parts := l.Decompound(word, opt, known)
		for _, t := range parts {
			fn(t, 1/float32(len(parts)))
		}
		return true
	})
	textnorm.Compounds(text, func(name string) bool {
		fn(name, 1)
		return true
	})
}

// Terms returns the index terms of text, repeats included: its words' terms in order, then its code names whole
// (textnorm.Compounds: "max_connections", "typing.type_checking"), which Words splits into parts that are common
// words on a documentation site ("type", "checking"), so that a question naming one matches the passages that do.
func (a Analyzer) Terms(text string) []string {
	var out []string
	a.each(text, func(term string, _ bool) { out = append(out, term) })
	return out
}

// TermsIn is Terms with text analysed in the language lang (a BCP 47 tag; "" and English tags take Terms):
// its words' terms in order (that language's stopwords dropped, its Snowball stems, CJK bigrams), then its code
// names. Compounds stay whole: without an index there is no vocabulary to split them against.
func (a Analyzer) TermsIn(lang, text string) []string {
	l := textnorm.LanguageOf(lang)
	if l == nil {
		return a.Terms(text)
	}
	var out []string
	a.eachLang(l, text, func(string) bool { return false }, func(term string, _ float32) { out = append(out, term) })
	return out
}

// Length is the length of text as BM25 normalises it: its words' terms. A code name adds a term for words that
// are already counted, not more text.
func (a Analyzer) Length(text string) int {
	n := 0
	textnorm.AppendWords(nil, text, func(w []byte) bool {
		if a.term(w) != "" {
			n++
		}
		return true
	})
	return n
}

// term maps one word from textnorm.AppendWords to its term, or "" when the word is dropped.
func (a Analyzer) term(w []byte) string {
	if !a.KeepStopwords && textnorm.IsStopword(string(w)) {
		return ""
	}
	if a.NoStem {
		return string(w)
	}
	return textnorm.Stem(string(w))
}

// each calls fn with each term of text: its words' terms in order (word true), then its code names (word false).
func (a Analyzer) each(text string, fn func(term string, word bool)) {
	textnorm.AppendWords(nil, text, func(w []byte) bool {
		if t := a.term(w); t != "" {
			fn(t, true)
		}
		return true
	})
	textnorm.Compounds(text, func(name string) bool {
		fn(name, false)
		return true
	})
}

// TermID is the stable 32-bit id of a term (FNV-1a), the index of its dimension in sparse vectors. Ids do not
// depend on the corpus, so documents indexed at different times share them.
func TermID(term string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(term))
	return h.Sum32()
}
