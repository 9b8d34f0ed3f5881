package retrieval

import (
	"cmp"
	"math"
	"math/bits"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"unicode/utf8"

	"github.com/ragproxy/ragproxy/index"
	"github.com/ragproxy/ragproxy/markdown"
	"github.com/ragproxy/ragproxy/retrieval/wordnet"
	"github.com/ragproxy/ragproxy/textnorm"
	"github.com/ragproxy/ragproxy/tokenizer"
)

// Passage selection. Chunk search ranks whole chunks, and on long pages and pages with large tables the chunk
// that states the asked fact loses to chunks that repeat a few of the question's words (often the page's rarest
// word) many times, or to shorter chunks that BM25's length normalisation favours. A passage that answers a
// question usually holds most of the question's words close together: the sentence "42 units of upper division
// coursework ... in bioengineering" for "how many upper div units for bioengineering", a table row under a header
// naming what is asked. So the fused candidates are reranked by their coverage: the share of the question's
// distinct terms (stemmed, without stopwords) found together in one window of the chunk, a run of
// passageWindow words or a table row with its header row. Each fused score is multiplied by coverage² (squared,
// so that holding the question beats a small lead in the fused order; coverage alone moved fewer answers into
// small contexts), and the best KeepChunks stay.
//
// Eval on both dev sites: proximity beats coverage over the whole chunk; counting terms beats weighting them by
// IDF (the rarest words of a question are often not what it asks: "start", "long", "keep"); the question's own
// terms beat adding its rewrites' (expansions bring alternatives of one word, which then count several times);
// adding the chunk's heading trail to every window lost passages (every chunk of a page then shares the page's
// words). Chunk texts are read at query time, for the candidates alone: nothing is kept per chunk.
//
// A window stays within one section of the text: it may run from a section into its subsections (a "Response
// times" section's words with its "Urgent requests" subsection's), never from a section into the next one at the
// same level or above. Listing and aggregate pages (a blog's index with every post's title and first paragraph, a
// newsletter archive) put unrelated items side by side, each under its own heading, and a window that ran from
// the end of one item into the title of the next held question terms that no page states together: the
// listing then outranked the post the facts belong to. On the dev sites this moved posts above a blog's index and
// left every other rank as it was (Config.NoSectionPassages turns it off; eval ablations).
const (
	// passageWindow is the window, in words that are not stopwords, whose question terms count together: about
	// a sentence or two.
	passageWindow = 20
	// passageCandidates is how many of the best fused chunks are reranked, at least (KeepChunks when more).
	passageCandidates = 40
	// maxPassageTerms bounds the question terms counted (a bit each).
	maxPassageTerms = 64
)

// chunkTexts reads the texts of a request's chunks (from disk, for a served index) once each: passage
// selection reads its candidates', the context the chosen ones'.
type chunkTexts struct {
	ix   *index.Index
	read map[int]string
	// context holds the texts as the context writes them, with compact links (see compact).
	context map[int]string
	// tokens are the retriever's sizes of those texts (Retriever.contextTokens).
	tokens []atomic.Int32
}

func (r *Retriever) newChunkTexts() *chunkTexts {
	return &chunkTexts{ix: r.ix, read: map[int]string{}, context: map[int]string{}, tokens: r.contextTokens}
}

// compact makes chunk id's context text, its text with compact links (markdown.CompactLinks; page is its page's
// URL), and returns its size in o200k tokens: the chunk's own count when no link changed, else counted again, once
// for the retriever.
func (t *chunkTexts) compact(id int, page string, tok *tokenizer.Tokenizer) (int, error) {
	s, err := t.get(id)
	if err != nil {
		return 0, err
	}
	c := markdown.CompactLinks(s, page)
	t.context[id] = c
	if c == s {
		return t.ix.Chunks[id].Tokens, nil
	}
	if id >= len(t.tokens) {
		return tok.Count(c), nil
	}
	if n := t.tokens[id].Load(); n > 0 {
		return int(n - 1), nil
	}
	n := tok.Count(c)
	t.tokens[id].Store(int32(n + 1))
	return n, nil
}

func (t *chunkTexts) get(id int) (string, error) {
	if s, ok := t.read[id]; ok {
		return s, nil
	}
	s, err := t.ix.ChunkText(id)
	if err != nil {
		return "", err
	}
	t.read[id] = s
	return s, nil
}

// selectPassages reorders cands, fused chunks best first, by passage coverage of the question (queries[0]) and
// keeps the best KeepChunks. It also returns, per page with a candidate, the best coverage of the question's own
// terms among its candidates (see rankByPassages); nil when a question without terms keeps the fused order.
// A quantity counts as a term for choosing chunks, not for ordering pages: in page order, pages stating any
// number near one of the question's words went ahead (Berkeley dev MRR 0.944 -> 0.924).
func (r *Retriever) selectPassages(queries []string, cands []scored, texts *chunkTexts) ([]scored, map[int]float64, error) {
	keep := min(r.cfg.KeepChunks, len(cands))
	if len(queries) == 0 || keep == 0 {
		return cands[:keep], nil, nil
	}
	q := r.passageQuery(r.qlang, queries[0])
	q.acrossSections = r.cfg.NoSectionPassages
	if r.cfg.NoQuantities {
		q.quantity = 0
	}
	if q.n == 0 {
		return cands[:keep], nil, nil
	}
	cover := map[int]float64{}
	// cands are in fused order and coverage is at most 1, so once a fused score is no better than the keep-th
	// best reranked score, neither that chunk nor any after it can be kept.
	out := slices.Clone(cands)
	top := make([]float64, 0, keep+1) // the best reranked scores, best first
	for i := range out {
		if len(top) == keep && out[i].score <= top[keep-1] {
			out = out[:i]
			break
		}
		text, err := texts.get(out[i].id)
		if err != nil {
			return nil, nil, err
		}
		c, qc := q.coverage(text)
		page := r.ix.Chunks[out[i].id].PageID
		cover[page] = max(cover[page], qc)
		out[i].score *= c * c
		j, _ := slices.BinarySearchFunc(top, out[i].score, func(a, b float64) int { return cmp.Compare(b, a) })
		if top = slices.Insert(top, j, out[i].score); len(top) > keep {
			top = top[:keep]
		}
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].score > out[b].score })
	return out[:min(keep, len(out))], cover, nil
}

// passageFloor is the coverage rankByPassages counts for a kept page none of whose candidate chunks holds a
// question term (or that has no candidate), so that such a page keeps a little of its fused score.
const passageFloor = 0.05

// rankByPassages reorders the kept pages by their fused score times (passageFloor + c)^PassagePrior, c the best
// passage coverage among the page's candidate chunks (selectPassages). Sites repeat a fact on pages that are not
// about it: a newsletter or blog post names a policy's numbers in a sentence among other news, a sibling policy
// page or a programme's overview mentions it in passing, and they win the fused page ranking on the question's
// words spread over their text or titles. The page the fact belongs to states it in a passage that holds most
// of the question together. Only the order changes: the kept pages and the chunks chosen for the context are
// the same, so Hit@8 and fact-in-context cannot move. cover nil (a question without terms) keeps the order.
func (r *Retriever) rankByPassages(pages []scored, cover map[int]float64) []scored {
	g := r.cfg.PassagePrior
	if g <= 0 || cover == nil {
		return pages
	}
	out := slices.Clone(pages)
	rescale(out, func(page int) float64 { return math.Pow(passageFloor+cover[page], g) })
	return out
}

// passageQuery is a question's distinct terms, numbered, with a cache from words to them.
type passageQuery struct {
	terms map[string]int // term -> its bit
	n     int            // the question's terms
	// quantity is the bit of a quantity in the text (isQuantity), one more term, for a question that asks for
	// one (asksQuantity); 0 when the question does not.
	quantity uint64
	first    [256]bool      // the terms' first bytes, which are their words' (stemming changes a word's end)
	words    map[string]int // word -> term, for words with such a first byte (stems each word once)
	buf      []byte
	hits     []termHit

	// acrossSections lets windows run across markdown headings, into the next section (Config.NoSectionPassages).
	acrossSections bool

	// lang, for a question in a language other than English, is its analysis (newLangPassageQuery); langWords
	// caches each word's terms in it.
	lang *textnorm.Language
	opt  textnorm.Options // how lang's words are read
	// weights are the bits' weights, nil when each weighs one: a Japanese word's bigrams share one word's weight
	// (opt.WordBigrams), and a follow-up's terms outweigh those only the question it continues holds (weighTurn).
	weights   []float64
	langWords map[string][]int
	known     func(term string) bool // the site's vocabulary, for compound parts
	scratch   []int
	// prefixes are the first two bytes of the terms; shortTerm the first byte of the terms of one byte, or of
	// one ASCII byte and more.
	prefixes  map[[2]byte]bool
	shortTerm [256]bool
}

// passageQuery is the passage query of question in its language lang: an English question's counts the site's
// spellings of its words and their related forms (forms from the lexicon and WordNet, both English); another
// language's counts its own stems and CJK bigrams.
func (r *Retriever) passageQuery(lang, question string) *passageQuery {
	return r.passageQueryWith(lang, question, textnorm.Options{})
}

// passageQueryWith is passageQuery with the words of a language other than English read with opt.
func (r *Retriever) passageQueryWith(lang, question string, opt textnorm.Options) *passageQuery {
	if l := textnorm.LanguageOf(lang); l != nil {
		return newLangPassageQuery(question, l, opt, r.chunkBM25.Has)
	}
	return newPassageQuery(question, r.lex.passageForms(r.wordNet()))
}

// wordNet is the English WordNet that rewrites and passage forms read, nil with Config.NoWordNet.
func (r *Retriever) wordNet() *wordnet.DB {
	if r.cfg.NoWordNet {
		return nil
	}
	return wordnet.Load()
}

// newLangPassageQuery numbers the distinct terms of question in language l: its words' terms but its
// stopwords' (Snowball stems; a CJK run's character bigrams, each a term of its own). The parts of a compound
// (l.Decompound against known, the site's vocabulary) count as the compound's term, in the question and in the
// texts: a passage writing "Zeilen nummerieren" holds the question's "Zeilennummerierung", and one writing the
// compound holds the question's "Zeilen" and "nummerieren". Its coverage reads texts in l as well, each bigram
// of a run a position.
func newLangPassageQuery(question string, l *textnorm.Language, opt textnorm.Options, known func(term string) bool) *passageQuery {
	q := &passageQuery{terms: map[string]int{}, lang: l, opt: opt, langWords: map[string][]int{}, known: known}
	var alias [][2]string // a compound's part, the compound's term
	// Japanese writes its words in kanji, katakana and hiragana by turns: with the joins of two words left out
	// (opt.WordBigrams), the bigrams that overlap one after another are one word's and share its weight, so that
	// "インストール" (five bigrams) counts as much as "記録" (one). Chinese runs are whole clauses: no weights.
	words := opt.WordBigrams && l.Tag() == "ja"
	var group []int // the bits of the word being read
	endGroup := func() {
		for _, b := range group {
			q.weights[b] = min(q.weights[b], 1/float64(len(group)))
		}
		group = group[:0]
	}
	var prevTerm string
	textnorm.Words(l.Normalize(question), func(w string) bool {
		var last string
		l.WordTerms(w, opt, func(t string) {
			last = t
			bit, ok := q.terms[t]
			if !ok && q.n < maxPassageTerms {
				bit = q.n
				q.terms[t] = q.n
				q.first[t[0]] = true
				q.n++
				if words {
					q.weights = append(q.weights, 1)
				}
			} else if !ok {
				return
			}
			if !words {
				return
			}
			if !overlaps(prevTerm, t) {
				endGroup()
			}
			group = append(group, bit)
			prevTerm = t
		})
		endGroup()
		prevTerm = ""
		for _, part := range l.Decompound(w, textnorm.Options{}, known) {
			alias = append(alias, [2]string{part, last})
		}
		return true
	})
	for _, a := range alias {
		if _, own := q.terms[a[0]]; !own {
			if bit, ok := q.terms[a[1]]; ok {
				q.terms[a[0]] = bit
				q.first[a[0][0]] = true
			}
		}
	}
	q.prefixes = make(map[[2]byte]bool, len(q.terms))
	for t := range q.terms {
		if len(t) < 2 || t[1] >= utf8.RuneSelf {
			q.shortTerm[t[0]] = true
			continue
		}
		q.prefixes[[2]byte{t[0], t[1]}] = true
	}
	return q
}

// oneOther is the bits of a word whose one term is not the question's.
var oneOther = []int{otherWord}

// mayStartTerm reports whether word w may have one of the question's terms as its term: unless it starts with
// two ASCII bytes that no question term starts with (or one, for a word or term of one byte).
func (q *passageQuery) mayStartTerm(w []byte) bool {
	if w[0] >= utf8.RuneSelf {
		return true
	}
	if len(w) < 2 || w[1] >= utf8.RuneSelf {
		return q.first[w[0]]
	}
	return q.first[w[0]] && (q.shortTerm[w[0]] || q.prefixes[[2]byte{w[0], w[1]}])
}

// mayHoldTerm reports whether word holds one of the question's terms of more than MinCompoundPart bytes as it is
// written, the test a compound that has one as a part nearly always passes (a stem is the start of its word), and
// one that spares splitting every other long word of the texts (a term of three letters, "and" of "ändern", is in
// a great many).
func (q *passageQuery) mayHoldTerm(word string) bool {
	if utf8.RuneCountInString(word) < textnorm.MinCompound {
		return false
	}
	for t := range q.terms {
		if len(t) > textnorm.MinCompoundPart && strings.Contains(word, t) {
			return true
		}
	}
	return false
}

// minHeadTerm is the shortest question term, in bytes, that headTerm finds at the start of a longer word.
const minHeadTerm = 6

// headTerm returns the bit of the question term that word, a word of a language that writes compounds as one
// word and holds no term of its own or by its parts, starts with: a derivation or a compound whose rest is no
// word of the site ("Protokollierung" holds the question's "Protokoll", "Installationsanleitung" its
// "Installation"); the longest such term when several are. Only terms of minHeadTerm bytes or more count: a
// shorter stem begins too many other words ("Dat" begins "Datei" and "Datum"). On the Debian Reference's German
// questions one answer more holds its fact (the log file's row, "Protokollierung der Operationen auf
// dpkg-Ebene", for "ein Protokoll aller Pakete"); retrieval and the other German sets are unchanged, with 5 or 8
// as with 6.
func (q *passageQuery) headTerm(word string) (int, bool) {
	best, bit := "", 0
	for t, i := range q.terms { // the longest such term, whatever the map's order
		longer := len(t) > len(best) || len(t) == len(best) && t < best
		if len(t) >= minHeadTerm && len(word) > len(t) && strings.HasPrefix(word, t) && longer {
			best, bit = t, i
		}
	}
	return bit, best != ""
}

// noTerm is the bits of a word w that holds none of the question's terms: none for a stopword, else oneOther.
func (q *passageQuery) noTerm(w []byte) []int {
	if q.lang.IsStopword(string(w)) {
		return nil
	}
	return oneOther
}

// langTerms are the bits of word w's terms in q's language, otherWord for a term that is not the question's;
// none for a stopword. A compound that is not a question term counts as the question terms its parts are.
func (q *passageQuery) langTerms(w []byte) []int {
	// Most words: two ASCII letters no question term starts with (a stem starts as its word does), too short
	// to be a compound.
	if !q.mayStartTerm(w) && (!q.lang.Compounds() || len(w) < textnorm.MinCompound) {
		return q.noTerm(w)
	}
	if bits, ok := q.langWords[string(w)]; ok {
		return bits
	}
	if !q.mayStartTerm(w) && !q.mayHoldTerm(string(w)) {
		bits := q.noTerm(w)
		q.langWords[string(w)] = bits
		return bits
	}
	word := string(w)
	// A CJK run is mostly a sentence of its own, seen once: its bits go to a scratch slice, not the cache.
	cjk := w[0] >= 0xE2 && textnorm.ScriptLanguage(word) != ""
	bits := []int{}
	if cjk {
		bits = q.scratch[:0]
	}
	q.lang.WordTerms(word, q.opt, func(t string) {
		if i, ok := q.terms[t]; ok {
			bits = append(bits, i)
		} else {
			bits = append(bits, otherWord)
		}
	})
	if cjk {
		q.scratch = bits
		return bits
	}
	if len(bits) == 1 && bits[0] == otherWord && q.lang.Compounds() && q.mayHoldTerm(word) {
		var parts []int
		for _, part := range q.lang.Decompound(word, textnorm.Options{}, q.known) {
			if i, ok := q.terms[part]; ok {
				parts = append(parts, i)
			}
		}
		if len(parts) > 0 {
			bits = parts
		} else if i, ok := q.headTerm(word); ok {
			bits = []int{i}
		}
	}
	q.langWords[word] = bits
	return bits
}

// overlaps reports whether CJK bigram b follows bigram a in one run ("イン" then "ンス").
func overlaps(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	r, _ := utf8.DecodeLastRuneInString(a)
	f, _ := utf8.DecodeRuneInString(b)
	return r == f && r >= 0x2E80
}

// weigh is the weight of mask's bits: their count, or their weights' sum when the query has weights.
func (q *passageQuery) weigh(mask uint64) float64 {
	if q.weights == nil {
		return float64(bits.OnesCount64(mask))
	}
	w := 0.0
	for m := mask; m != 0; m &= m - 1 {
		if i := bits.TrailingZeros64(m); i < len(q.weights) {
			w += q.weights[i]
		} else {
			w++ // the quantity
		}
	}
	return w
}

// termHit is a question term found at a position of a text.
type termHit struct{ pos, bit int }

// newPassageQuery numbers the distinct terms of question. forms, when not nil, gives a question word's other
// spellings on the site (lexicon.forms): their terms count as that word's, so a passage stating "password" holds
// the question's "pasword", and "Cognitive Science" its "cog sci". A form's term that the question has itself
// keeps its own number.
func newPassageQuery(question string, forms func(word string) []string) *passageQuery {
	q := &passageQuery{terms: map[string]int{}, words: map[string]int{}}
	var alias [][2]string // a form's term, the term of its word
	textnorm.Words(question, func(w string) bool {
		if textnorm.IsStopword(w) {
			return true
		}
		t := textnorm.Stem(w)
		if _, ok := q.terms[t]; !ok && q.n < maxPassageTerms {
			q.terms[t] = q.n
			q.first[t[0]] = true
			q.n++
		}
		if forms != nil {
			for _, f := range forms(w) {
				textnorm.Terms(f, func(ft string) bool {
					alias = append(alias, [2]string{ft, t})
					return true
				})
			}
		}
		return true
	})
	for _, a := range alias {
		bit, ok := q.terms[a[1]]
		if _, own := q.terms[a[0]]; ok && !own {
			q.terms[a[0]] = bit
			q.first[a[0][0]] = true
		}
	}
	if q.n > 0 && q.n < maxPassageTerms && asksQuantity(question) {
		q.quantity = 1 << q.n
	}
	return q
}

// Values of passageQuery.term for words that are not question terms.
const (
	otherWord = -1
	stopword  = -2
)

// term returns the bit of word w's term (the quantity's for a quantity that is not a question term), otherWord
// or stopword.
func (q *passageQuery) term(w []byte) int {
	if q.lang != nil { // the first of the word's question terms
		bits := q.langTerms(w)
		if len(bits) == 0 {
			return stopword
		}
		for _, i := range bits {
			if i >= 0 {
				return i
			}
		}
		return otherWord
	}
	if !q.first[w[0]] { // most words: no term starts with their letter
		if q.quantity != 0 && isQuantity(w) {
			return q.n
		}
		if textnorm.IsStopword(string(w)) {
			return stopword
		}
		return otherWord
	}
	if i, ok := q.words[string(w)]; ok {
		return i
	}
	s := string(w)
	i := otherWord
	if textnorm.IsStopword(s) {
		i = stopword
	} else if j, ok := q.terms[textnorm.Stem(s)]; ok {
		i = j
	} else if q.quantity != 0 && isQuantity(w) {
		i = q.n
	}
	q.words[s] = i
	return i
}

// coverage is the largest share of the question's terms that one window of text holds: passageWindow
// consecutive words (stopwords not counted) within one section and its subsections, or a table row together
// with its table's header row. passage counts a quantity as a term when the question asks for one; question
// counts the question's terms alone.
func (q *passageQuery) coverage(text string) (passage, question float64) {
	var (
		hits   = q.hits[:0]
		pos    int
		best   windowBest
		header uint64    // the current table's header row
		row    int       // lines into the current table: 0 outside one
		prev   uint64    // the previous line's terms
		open   []section // the sections open at this line, outermost first
		fenced bool      // inside a fenced code block, where "#" starts comments, not headings
	)
	for line := range strings.Lines(markdown.StripLinks(text)) {
		t := strings.TrimSpace(line)
		if level := markdown.HeadingOutsideFence(t, &fenced); level > 0 && !q.acrossSections {
			// The sections this heading closes (the last one at its level or deeper, with their subsections)
			// end here: their hits are counted, then dropped, so that no window joins them to what follows.
			cut := len(hits)
			for len(open) > 0 && open[len(open)-1].level >= level {
				cut = open[len(open)-1].start
				open = open[:len(open)-1]
			}
			if cut < len(hits) {
				best.window(hits, q.quantity)
				hits = hits[:cut]
			}
			open = append(open, section{level, len(hits)})
		}
		var m uint64
		if q.lang != nil {
			t = q.lang.Normalize(t)
		}
		q.buf = textnorm.AppendWords(q.buf, t, func(w []byte) bool {
			if q.lang != nil {
				for _, i := range q.langTerms(w) {
					if i >= 0 {
						hits = append(hits, termHit{pos, i})
						m |= 1 << i
					}
					pos++
				}
				return true
			}
			switch i := q.term(w); i {
			case stopword:
			case otherWord:
				pos++
			default:
				hits = append(hits, termHit{pos, i})
				m |= 1 << i
				pos++
			}
			return true
		})
		if !strings.HasPrefix(t, "|") {
			row, header, prev = 0, 0, m
			continue
		}
		row++
		if row == 2 && isTableSeparator(t) {
			header = prev // a table's first line is its header when a separator row follows
		}
		best.add(header|m, q.quantity)
		prev = m
	}
	q.hits = hits
	best.window(hits, q.quantity)
	terms := q.n
	if q.quantity != 0 {
		terms++
	}
	return float64(best.all) / float64(terms), float64(best.own) / float64(q.n)
}

// section is a section open at some point of a text: its heading's level and its first hit.
type section struct{ level, start int }

// windowBest is the most distinct terms a window holds: all of them, and without the quantity (the question's
// own).
type windowBest struct{ all, own int }

// add counts a window holding the terms of mask, quantity being the quantity's bit.
func (b *windowBest) add(mask, quantity uint64) {
	b.all = max(b.all, bits.OnesCount64(mask))
	b.own = max(b.own, bits.OnesCount64(mask&^quantity))
}

// window counts every window of passageWindow words over hits, in text order.
func (b *windowBest) window(hits []termHit, quantity uint64) {
	var count [maxPassageTerms]int
	var win uint64
	lo := 0
	for _, h := range hits {
		for hits[lo].pos <= h.pos-passageWindow {
			if count[hits[lo].bit]--; count[hits[lo].bit] == 0 {
				win &^= 1 << hits[lo].bit
			}
			lo++
		}
		count[h.bit]++
		win |= 1 << h.bit
		b.add(win, quantity)
	}
}

// isTableSeparator reports whether a markdown table line is the separator row under the header ("|---|:--:|").
func isTableSeparator(line string) bool {
	return strings.Contains(line, "-") && strings.Trim(line, "|-: ") == ""
}
