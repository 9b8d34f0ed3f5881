package lexical

import (
	"encoding/binary"
	"io"
	"maps"
	"math"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/ragproxy/ragproxy/textnorm"
)

// Postings are an index's inverted lists before they become a BM25: each term's postings compressed (document
// gaps and term frequencies as varints, two or three bytes a posting rather than the eight of the final arrays).
// BM25 lays them out for searching; WriteTo writes the binary form straight from them, so that ingest, which
// only stores the index, never holds the final arrays (a large site's chunk index is hundreds of megabytes).
type Postings struct {
	cfg     Config
	n       int
	avgdl   float64
	lengths []int32 // document lengths in terms
	// docAvg, set for documents in several languages, is each document's language's average length, which
	// normalises it instead of avgdl: one language's analysis (CJK bigrams) would otherwise lengthen every
	// document's yardstick.
	docAvg   []float32
	names    []string // terms, numbered in order of first occurrence
	lists    [][]byte // per term: varint (document - previous document), varint term frequency
	df       []int32  // per term: its postings
	order    []int32  // terms in sorted order
	postings int
	textLen  int
}

// IndexFunc builds the postings of n documents, asking doc for each once, in order: a caller that composes the
// texts need not hold them all.
func IndexFunc(n int, doc func(i int) string, cfg Config) *Postings {
	cfg = cfg.withDefaults()
	p := &Postings{cfg: cfg, n: n, lengths: make([]int32, n)}
	ids := make(map[string]int32) // term -> its number
	// Words repeat across documents far more than they are new: caching word -> term number saves stemming
	// and re-hashing. noTerm marks dropped words (stopwords).
	const noTerm = -1
	words := make(map[string]int32)
	var (
		counts  []int32
		last    []int32 // per term, the last document it was posted for
		touched []int32
		buf     []byte
		total   int64
	)
	// newTerm numbers a term not seen before.
	newTerm := func(term string) int32 {
		t := int32(len(p.names))
		ids[term] = t
		p.names = append(p.names, term)
		p.lists = append(p.lists, nil)
		p.df = append(p.df, 0)
		counts = append(counts, 0)
		last = append(last, 0)
		return t
	}
	post := func(t int32) {
		if counts[t] == 0 {
			touched = append(touched, t)
		}
		counts[t] += tfUnit
	}
	// Documents in languages other than English: each word's terms per language (a word may give several: CJK
	// bigrams), and the words that may be compounds, split once the whole vocabulary is known.
	langWords := map[string]map[string][]int32{} // by language tag: an unlisted language's Language is made per call
	var docLang []*textnorm.Language             // per document, when cfg.Lang is set (nil: English)
	var pending []compoundWord
	opt := cfg.Analyzer.options()
	for d := range n {
		var dl int32
		text := doc(d)
		var l *textnorm.Language
		if cfg.Lang != nil {
			l = textnorm.LanguageOf(cfg.Lang(d))
			docLang = append(docLang, l)
		}
		if l != nil {
			text = l.Normalize(text)
			cache := langWords[l.Tag()]
			if cache == nil {
				cache = map[string][]int32{}
				langWords[l.Tag()] = cache
			}
			buf = textnorm.AppendWords(buf, text, func(w []byte) bool {
				ts, ok := cache[string(w)]
				if !ok {
					word := string(w)
					l.WordTerms(word, opt, func(term string) {
						t, ok := ids[term]
						if !ok {
							t = newTerm(term)
						}
						ts = append(ts, t)
					})
					if ts == nil {
						ts = []int32{}
					}
					cache[word] = ts
					if !opt.NoCompounds && len(ts) == 1 && utf8.RuneCountInString(word) >= textnorm.MinCompound {
						pending = append(pending, compoundWord{doc: int32(d), lang: l, word: word})
					}
				} else if len(ts) == 1 && !opt.NoCompounds && utf8.RuneCount(w) >= textnorm.MinCompound {
					pending = append(pending, compoundWord{doc: int32(d), lang: l, word: string(w)})
				}
				for _, t := range ts {
					post(t)
					dl++
				}
				return true
			})
		} else {
			buf = textnorm.AppendWords(buf, text, func(w []byte) bool {
				t, ok := words[string(w)]
				if !ok {
					term := cfg.Analyzer.term(w)
					t = noTerm
					if term != "" {
						if t, ok = ids[term]; !ok {
							t = newTerm(term)
						}
					}
					words[string(w)] = t
				}
				if t == noTerm {
					return true
				}
				post(t)
				dl++
				return true
			})
		}
		// Code names are terms besides the words they join, not more text: the length stays the words'.
		textnorm.Compounds(text, func(name string) bool {
			t, ok := ids[name]
			if !ok {
				t = newTerm(name)
			}
			post(t)
			return true
		})
		for _, t := range touched {
			l := p.lists[t]
			l = binary.AppendUvarint(l, uint64(int32(d)-last[t]))
			p.lists[t] = binary.AppendUvarint(l, uint64(counts[t]))
			last[t], counts[t] = int32(d), 0
			p.df[t]++
		}
		p.postings += len(touched)
		touched = touched[:0]
		p.lengths[d] = dl
		total += int64(dl)
	}
	if len(pending) > 0 {
		p.addCompoundParts(pending, ids, newTerm)
	}
	if n > 0 {
		p.avgdl = float64(total) / float64(n)
	}
	if p.avgdl == 0 {
		p.avgdl = 1
	}
	p.languageAverages(docLang)
	p.order = make([]int32, len(p.names))
	for i := range p.order {
		p.order[i] = int32(i)
		p.textLen += len(p.names[i])
	}
	slices.SortFunc(p.order, func(x, y int32) int { return strings.Compare(p.names[x], p.names[y]) })
	return p
}

// each calls f with the postings of term number t (in order of first occurrence), in document order.
func (p *Postings) each(t int32, f func(doc int32, tf float64)) {
	l, doc := p.lists[t], int32(0)
	for len(l) > 0 {
		gap, k := binary.Uvarint(l)
		tf, m := binary.Uvarint(l[k:])
		l = l[k+m:]
		doc += int32(gap)
		f(doc, float64(tf)/tfUnit)
	}
}

// tfUnit is what one occurrence of a term adds to its frequency in a posting list: six units, so that the two
// or three parts of a compound can share one occurrence (see addCompoundParts).
const tfUnit = 6

// languageAverages sets docAvg when the documents are in more than one language (langs, per document). Languages
// are told by their tags: a language without an analysis of its own here (Ukrainian, Slovak) is a new Language
// value for each of its documents, and keyed by those its documents each had their own length for average, as if
// BM25 did not normalise their lengths at all.
func (p *Postings) languageAverages(langs []*textnorm.Language) {
	key := func(l *textnorm.Language) string {
		if l == nil {
			return "" // English
		}
		return l.Tag()
	}
	sum, count := map[string]int64{}, map[string]int{}
	for d, l := range langs {
		sum[key(l)] += int64(p.lengths[d])
		count[key(l)]++
	}
	if len(count) < 2 {
		return
	}
	p.docAvg = make([]float32, len(langs))
	for d, l := range langs {
		k := key(l)
		p.docAvg[d] = max(float32(float64(sum[k])/float64(count[k])), 1)
	}
}

// impactOf is a posting's weight: idf(t) * tf*(k1+1) / (tf + k1*(1-b+b*|d|/avgdl)), avgdl being the average of
// the document's language when the documents are in several.
func (p *Postings) impactOf(idf float64, doc int32, tf float64) float32 {
	avg := p.avgdl
	if p.docAvg != nil {
		avg = float64(p.docAvg[doc])
	}
	norm := p.cfg.K1 * (1 - p.cfg.B + p.cfg.B*float64(p.lengths[doc])/avg)
	return float32(idf * tf * (p.cfg.K1 + 1) / (tf + norm))
}

func (p *Postings) idfOf(df int32) float64 { return idf(p.n, int(df)) }

// idf is BM25's idf of a term found in df of n documents.
func idf(n, df int) float64 {
	return math.Log(1 + (float64(n)-float64(df)+0.5)/(float64(df)+0.5))
}

// BM25 lays the postings out for searching. It empties p: each term's compressed postings are let go as its
// final arrays are filled, so the peak is about the final arrays.
func (p *Postings) BM25() *BM25 {
	b := &BM25{cfg: p.cfg, n: p.n, avgdl: p.avgdl}
	var text strings.Builder
	text.Grow(p.textLen)
	b.termOffs = make([]uint32, len(p.names)+1)
	b.idf = make([]float32, len(p.names))
	b.offs = make([]int32, len(p.names)+1)
	b.docs = make([]int32, 0, p.postings)
	b.impact = make([]float32, 0, p.postings)
	for t, old := range p.order {
		text.WriteString(p.names[old])
		b.termOffs[t+1] = uint32(text.Len())
		idf := p.idfOf(p.df[old])
		b.idf[t] = float32(idf)
		p.each(old, func(doc int32, tf float64) {
			b.docs = append(b.docs, doc)
			b.impact = append(b.impact, p.impactOf(idf, doc, tf))
		})
		p.lists[old] = nil
		b.offs[t+1] = int32(len(b.docs))
	}
	b.termText = text.String()
	*p = Postings{}
	b.initPool()
	return b
}

// BinarySize returns the length of the binary form WriteTo writes.
func (p *Postings) BinarySize() int {
	return int(binarySize(uint64(len(p.names)), uint64(p.postings), uint64(p.textLen)))
}

// WriteTo writes the binary form of the index the postings make (the bytes BM25's WriteTo would write) to w,
// reading the compressed postings twice (documents, then impacts) and holding no final array.
func (p *Postings) WriteTo(w io.Writer) (int64, error) {
	t := len(p.names)
	if err := checkSize(p.n, t, p.postings, p.textLen); err != nil {
		return 0, err
	}
	header := appendHeader(make([]byte, 0, headerSize), p.cfg, p.n, p.avgdl, t, p.postings, p.textLen)
	return writeForm(w, header, func(w io.Writer) {
		ww := newWordWriter(w)
		for _, old := range p.order {
			ww.put(math.Float32bits(float32(p.idfOf(p.df[old]))))
		}
		off := uint32(0)
		ww.put(off)
		for _, old := range p.order {
			off += uint32(p.df[old])
			ww.put(off)
		}
		off = 0
		ww.put(off)
		for _, old := range p.order {
			off += uint32(len(p.names[old]))
			ww.put(off)
		}
		for _, old := range p.order {
			p.each(old, func(doc int32, _ float64) { ww.put(uint32(doc)) })
		}
		for _, old := range p.order {
			idf := p.idfOf(p.df[old])
			p.each(old, func(doc int32, tf float64) { ww.put(math.Float32bits(p.impactOf(idf, doc, tf))) })
		}
		ww.flush()
		for _, old := range p.order {
			io.WriteString(w, p.names[old])
		}
	})
}

// wordWriter writes little-endian 4-byte words through a bounded buffer.
type wordWriter struct {
	w   io.Writer
	buf []byte
}

func newWordWriter(w io.Writer) *wordWriter { return &wordWriter{w: w, buf: make([]byte, 0, 1<<16)} }

func (ww *wordWriter) put(v uint32) {
	if len(ww.buf)+4 > cap(ww.buf) {
		ww.flush()
	}
	ww.buf = binary.LittleEndian.AppendUint32(ww.buf, v)
}

func (ww *wordWriter) flush() {
	ww.w.Write(ww.buf)
	ww.buf = ww.buf[:0]
}

// compoundWord is a long word of a document in a language that writes compounds as one word.
type compoundWord struct {
	doc  int32
	lang *textnorm.Language
	word string
}

// addCompoundParts posts the parts of the compounds among words, split against the terms of the whole index
// (ids), as terms of their documents besides the compound's own: like code names, they add terms, not length.
// The parts of one occurrence of a compound share that occurrence, as they share one word's weight in a question:
// at a whole occurrence each, a page that writes many "…server" compounds matched "Server" as often as it wrote
// them (German MRR on the Debian Handbook 0.757; shared: 0.778, the Debian Reference unchanged at 0.896).
func (p *Postings) addCompoundParts(words []compoundWord, ids map[string]int32, newTerm func(string) int32) {
	known := func(term string) bool { _, ok := ids[term]; return ok }
	extra := map[int32]map[int32]uint64{}     // term -> document -> occurrences
	split := map[string]map[string][]string{} // by language tag
	for _, cw := range words {
		memo := split[cw.lang.Tag()]
		if memo == nil {
			memo = map[string][]string{}
			split[cw.lang.Tag()] = memo
		}
		parts, ok := memo[cw.word]
		if !ok {
			parts = cw.lang.Decompound(cw.word, p.cfg.Analyzer.options(), known)
			memo[cw.word] = parts
		}
		for _, part := range parts {
			t, ok := ids[part]
			if !ok {
				t = newTerm(part)
			}
			if extra[t] == nil {
				extra[t] = map[int32]uint64{}
			}
			extra[t][cw.doc] += tfUnit / uint64(len(parts))
		}
	}
	for t, docs := range extra {
		// Decode the term's list, add the parts' occurrences, and encode it again in document order.
		tf := maps.Clone(docs)
		l := p.lists[t]
		doc := int64(0)
		for len(l) > 0 {
			gap, n := binary.Uvarint(l)
			l = l[n:]
			f, m := binary.Uvarint(l)
			l = l[m:]
			doc += int64(gap)
			tf[int32(doc)] += f
		}
		order := slices.Sorted(maps.Keys(tf))
		var out []byte
		last := int32(0)
		for _, d := range order {
			out = binary.AppendUvarint(out, uint64(d-last))
			out = binary.AppendUvarint(out, tf[d])
			last = d
		}
		p.postings += len(order) - int(p.df[t])
		p.lists[t], p.df[t] = out, int32(len(order))
	}
}
