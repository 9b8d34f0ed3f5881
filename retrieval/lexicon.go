package retrieval

import (
	"slices"
	"sort"
	"strings"
	"unicode"

	"github.com/ragproxy/ragproxy/index"
	"github.com/ragproxy/ragproxy/markdown"
	"github.com/ragproxy/ragproxy/retrieval/wordnet"
	"github.com/ragproxy/ragproxy/textnorm"
)

// lexicon is what the site's own text says about its words: how common each is, which words its titles and
// headings use, the acronyms it defines ("Master of Financial Engineering (MFE)") and the pages defining the code
// names it links (see definingPages). Query expansion uses it to do without a model what the analysis model does
// with one: correct misspellings, complete abbreviations and spell out acronyms, in the site's vocabulary.
type lexicon struct {
	df       map[string]int    // word -> number of chunks containing it
	heading  map[string]int    // word -> occurrences in titles and headings
	headings []string          // the keys of heading, sorted, for prefix search
	acronyms map[string]string // lowercase acronym -> its expansion
	defined  map[string][]int  // code name (nameKey) -> the pages defining it, most linked first
	byLen    map[int][]string  // vocabulary words by length, for spelling correction
	stems    map[string]int    // Porter stem -> chunks containing a word with it (summed over its words)
}

// acronyms calls yield with each parenthesised acronym of s, "(MFE)": an upper-case letter, then one to nine
// letters or '&', in parentheses, with the acronym's start and end and the opening parenthesis's position. A
// scanner, not a regular expression: it reads every page of the site.
func acronyms(s string, yield func(open, start, end int)) {
	for i := 0; ; {
		j := strings.IndexByte(s[i:], '(')
		if j < 0 {
			return
		}
		open := i + j
		start, k := open+1, open+1
		if k < len(s) && 'A' <= s[k] && s[k] <= 'Z' {
			k++
			for k < len(s) && k-start < 10 && (isASCIILetter(s[k]) || s[k] == '&') {
				k++
			}
			if k < len(s) && s[k] == ')' && k-start >= 2 {
				yield(open, start, k)
			}
		}
		i = open + 1
	}
}

func isASCIILetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

func newEmptyLexicon() *lexicon {
	return &lexicon{df: map[string]int{}, heading: map[string]int{}, acronyms: map[string]string{}, byLen: map[int][]string{},
		stems: map[string]int{}, defined: map[string][]int{}}
}

func newLexicon(ix *index.Index) (*lexicon, error) {
	lx := newEmptyLexicon()
	// Count each word once per chunk through word ids, so that a word costs a map lookup (no allocation) rather
	// than a string and a set per chunk: this loop reads every chunk of the site.
	ids := map[string]int32{}
	var df, last []int32 // by word id: chunks holding it, and the last chunk (+1) that counted it
	var words []string
	var buf []byte
	defs := map[string][]string{} // lowercase acronym -> every expansion the site gives, in page order
	names := newLinkDefinitions(ix)
	addHeading := func(s string) {
		textnorm.Words(s, func(w string) bool {
			if _, ok := lx.heading[w]; !ok {
				w = strings.Clone(w) // not a part of the page's text, which would stay in memory with it
			}
			lx.heading[w]++
			return true
		})
	}
	// The pages come first, in page order, then the chunks.
	err := ix.EachText(func(page bool, id int, text string) error {
		if page {
			addHeading(ix.Pages[id].Title)
			for _, line := range strings.Split(text, "\n") {
				if strings.HasPrefix(line, "#") {
					addHeading(line)
				}
			}
			names.add(text)
			acronyms(text, func(open, start, end int) {
				acr := text[start:end]
				if exp := expandAcronym(text[max(0, open-120):open], acr); exp != "" {
					defs[strings.ToLower(acr)] = append(defs[strings.ToLower(acr)], strings.Clone(exp))
				}
			})
			return nil
		}
		ci := id
		buf = textnorm.AppendWords(buf[:0], markdown.StripLinks(text), func(w []byte) bool {
			id, ok := ids[string(w)]
			if !ok {
				id = int32(len(words))
				words = append(words, string(w))
				ids[words[id]] = id
				df, last = append(df, 0), append(last, 0)
			}
			if last[id] != int32(ci+1) {
				last[id] = int32(ci + 1)
				df[id]++
			}
			return true
		})
		return nil
	})
	if err != nil {
		return nil, err
	}
	for id, w := range words {
		lx.df[w] = int(df[id])
	}
	for acr, exps := range defs {
		lx.acronyms[acr] = mostCommon(exps)
	}
	lx.defined = names.pages()
	lx.derive()
	return lx, nil
}

// derive fills in what the counts and acronyms imply: the sorted heading words, the stems' counts and the
// vocabulary by length.
func (lx *lexicon) derive() {
	for w := range lx.heading {
		lx.headings = append(lx.headings, w)
	}
	sort.Strings(lx.headings)
	for w, n := range lx.df {
		lx.stems[textnorm.Stem(w)] += n
		if n >= 2 && len(w) >= 3 && !hasDigit(w) {
			lx.byLen[len(w)] = append(lx.byLen[len(w)], w)
		}
	}
	for _, ws := range lx.byLen {
		sort.Strings(ws)
	}
}

// mostCommon returns the expansion given most often, ignoring case; the first of equals. Acronyms collide ("CS"
// is "Computer Science" on most pages of a university site and "Corporate Sustainability" on one), and the most
// frequent reading is the best guess without context.
func mostCommon(exps []string) string {
	n := map[string]int{}
	first := map[string]string{} // the spelling a reading was first given
	best := ""
	for _, e := range exps {
		k := strings.ToLower(e)
		n[k]++
		if _, ok := first[k]; !ok {
			first[k] = e
		}
		if best == "" || n[k] > n[best] {
			best = k
		}
	}
	return first[best]
}

// expandAcronym finds the words before an acronym whose initials spell it, skipping short function words:
// "Master of Financial Engineering" for "MFE", "Letters & Science" for "L&S".
func expandAcronym(before, acr string) string {
	words := strings.Fields(before)
	letters := []rune(strings.ToLower(acr))
	i := len(letters) - 1
	start := len(words)
	for j := len(words) - 1; j >= 0 && i >= 0; j-- {
		w := strings.Trim(words[j], `,;:"'`)
		if w == "" {
			return ""
		}
		first := unicode.ToLower([]rune(w)[0])
		switch {
		case first == letters[i]:
			i--
			start = j
		case isFunctionWord(w) && i < len(letters)-1:
			continue
		default:
			return ""
		}
	}
	if i >= 0 || start == len(words) {
		return ""
	}
	return strings.Join(words[start:], " ")
}

func isFunctionWord(w string) bool {
	switch strings.ToLower(w) {
	case "of", "and", "in", "the", "for", "on", "at", "to":
		return true
	}
	return false
}

// splitCode splits a word glued from letters and then digits (a course or product code typed without its space,
// "cs61b", "math1a") into its letter and number parts, or returns nil.
func splitCode(w string) []string {
	i := strings.IndexFunc(w, unicode.IsDigit)
	if i < 2 || strings.IndexFunc(w[:i], func(r rune) bool { return !unicode.IsLetter(r) }) >= 0 {
		return nil
	}
	return []string{w[:i], w[i:]}
}

func hasDigit(w string) bool {
	return strings.IndexFunc(w, unicode.IsDigit) >= 0
}

// degreeBase is the base of an adjective's comparative or superlative that WordNet's morphy finds ("highest" ->
// "high", "biggest" -> "big", "older" -> "old"), which Porter's stemmer leaves as they are: "" for other words,
// and for a word that is a lemma of its own ("latest", "number", "offer"), whose suffix is not an inflection.
func degreeBase(w string, db *wordnet.DB) string {
	if db == nil || !strings.HasSuffix(w, "er") && !strings.HasSuffix(w, "est") {
		return ""
	}
	for _, pos := range []wordnet.POS{wordnet.Noun, wordnet.Verb, wordnet.Adjective, wordnet.Adverb} {
		if bs := db.BaseForms(w, pos); slices.Contains(bs, w) {
			return ""
		}
	}
	if bs := db.BaseForms(w, wordnet.Adjective); len(bs) > 0 {
		return bs[0]
	}
	return ""
}

// wordForms is forms with, when db is not nil, the base of a comparative or superlative the site uses (see
// degreeBase).
func (lx *lexicon) wordForms(db *wordnet.DB) func(w string) []string {
	return func(w string) []string {
		if b := degreeBase(w, db); b != "" && lx.stemDF(b) > 0 {
			return append(lx.forms(w), b)
		}
		return lx.forms(w)
	}
}

// passageForms is wordForms with, when db is not nil, the words WordNet relates to w by form and meaning
// (wordnet.DB.Related) that the site uses under another stem: a passage stating a "Numeric value", the
// "admission" of an applicant or a password's "length" holds the question's "number", "admit" or "long". They
// count in passages only: as query expansion they matched more than they found (eval on the five dev sites:
// MRR 0.872 -> 0.855), while in passages fact-in-context rose from 0.943 to 0.955 with MRR unchanged. So do w's
// irregular inflections and bases (wordnet.DB.Irregular: "kept" for "keep", "written" for "write"), which
// Porter stems do not join: in passages they held one fact more in the offline answers of ASF dev and Berkeley
// held-out and lost none on ten English sets; as query expansion they moved MRR by up to 0.017 either way.
func (lx *lexicon) passageForms(db *wordnet.DB) func(w string) []string {
	forms := lx.wordForms(db)
	if db == nil {
		return forms
	}
	return func(w string) []string {
		out := forms(w)
		stem := textnorm.Stem(w)
		for _, words := range [][]string{db.Related(w), db.Irregular(w)} {
			for _, r := range words {
				if rs := textnorm.Stem(r); rs != stem && lx.stems[rs] > 0 {
					out = append(out, r)
				}
			}
		}
		return out
	}
}

// expand returns q with its words corrected, completed and spelled out where the site's vocabulary suggests, and
// with the site's words for what it asks (synonyms: question shapes, and WordNet's synonyms when db is not nil),
// or "" when it changes nothing. The original words stay, so a wrong guess only adds terms.
func (lx *lexicon) expand(q string, db *wordnet.DB) string {
	var extra []string
	forms := lx.wordForms(db)
	textnorm.Words(q, func(w string) bool {
		if !textnorm.IsStopword(w) {
			extra = append(extra, forms(w)...)
		}
		return true
	})
	shapes, syn := synonyms(q, db, lx.stemDF)
	extra = append(append(extra, shapes...), syn...)
	if len(extra) == 0 {
		return ""
	}
	kt := keyTerms(q)
	if len(syn) > 0 {
		kt += " " + kt // the question's own words weigh twice a synonym in BM25, which counts repeated terms
	}
	return kt + " " + strings.Join(extra, " ")
}

// forms returns the site's spellings of w, a word of a question that is not a stopword: a code split as the
// catalogue writes it ("cs61b" -> "cs", "61b"), an acronym spelled out, the word's other spelling ("advisor" ->
// "adviser", "center" -> "centre": spellings), an abbreviation its headings never use completed ("div" ->
// "division"), or, for a word the site never uses, its corrections ("pasword" -> "password"). They are the same
// word written another way, not other words for it (those are synonyms).
func (lx *lexicon) forms(w string) []string {
	if hasDigit(w) {
		return splitCode(w)
	}
	if exp, ok := lx.acronyms[w]; ok {
		return []string{exp}
	}
	if v := lx.spellings(w); v != nil {
		return v
	}
	if c := lx.complete(w); c != "" && lx.heading[w] == 0 && lx.df[w]*10 < lx.df[c] {
		return []string{c}
	}
	if lx.df[w] == 0 {
		return lx.correct(w)
	}
	return nil
}

// stemDF is how often the site uses w in any inflection, as search matches it ("commences" for "commence"):
// the chunks containing a word with w's Porter stem, summed over those words.
func (lx *lexicon) stemDF(w string) int {
	return lx.stems[textnorm.Stem(w)]
}

// complete expands an abbreviation that begins a title or heading word ("cog" -> "cognitive", "econ" ->
// "economics"), choosing the most frequent such word. A plural abbreviation ("prereqs", "profs") completes to a
// plural heading word only ("professors", not the commoner "professional"; nothing, rather than "depth", for
// "depts").
func (lx *lexicon) complete(w string) string {
	plural := false
	if len(w) > 3 && strings.HasSuffix(w, "s") && lx.df[w] == 0 {
		w, plural = w[:len(w)-1], true
	}
	if len(w) < 3 || len(w) > 6 {
		return ""
	}
	best, bestN := "", 0
	bestPlural, bestPluralN := "", 0
	for i := sort.SearchStrings(lx.headings, w); i < len(lx.headings) && strings.HasPrefix(lx.headings[i], w); i++ {
		hw := lx.headings[i]
		if len(hw) <= len(w) {
			continue
		}
		n := lx.heading[hw] // in sorted order, so ties keep the first
		if n > bestN {
			best, bestN = hw, n
		}
		if plural && strings.HasSuffix(hw, "s") && n > bestPluralN {
			bestPlural, bestPluralN = hw, n
		}
	}
	if plural {
		best, bestN = bestPlural, bestPluralN
	}
	if bestN < 2 {
		return ""
	}
	return best
}

// correct returns the vocabulary words within edit distance 1 (2 for words of 7 letters or more) of a word the
// site never uses: the most common one, and a second when it is nearly as common (without context, "brake" may
// be "break" or "blake").
func (lx *lexicon) correct(w string) []string {
	if len(w) < 4 {
		return nil
	}
	maxD := 1
	if len(w) >= 7 {
		maxD = 2
	}
	type cand struct {
		w string
		n int
	}
	var cs []cand
	for l := len(w) - maxD; l <= len(w)+maxD; l++ {
		for _, v := range lx.byLen[l] {
			if editDistance(w, v, maxD) <= maxD {
				cs = append(cs, cand{v, lx.df[v]})
			}
		}
	}
	sort.Slice(cs, func(i, j int) bool { return cs[i].n > cs[j].n || cs[i].n == cs[j].n && cs[i].w < cs[j].w })
	var out []string
	for i, c := range cs {
		if i == 2 || i > 0 && c.n*3 < cs[0].n {
			break
		}
		out = append(out, c.w)
	}
	return out
}

// editDistance is the Damerau-Levenshtein (adjacent transposition) distance, or max+1 once it exceeds max.
func editDistance(a, b string, max int) int {
	if abs(len(a)-len(b)) > max {
		return max + 1
	}
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		rowMin := cur[0]
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
			rowMin = min(rowMin, cur[j])
		}
		if rowMin > max {
			return max + 1
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
