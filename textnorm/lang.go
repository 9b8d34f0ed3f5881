package textnorm

import (
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/blevesearch/snowballstem"
	"github.com/blevesearch/snowballstem/arabic"
	"github.com/blevesearch/snowballstem/danish"
	"github.com/blevesearch/snowballstem/dutch"
	"github.com/blevesearch/snowballstem/finnish"
	"github.com/blevesearch/snowballstem/french"
	"github.com/blevesearch/snowballstem/german"
	"github.com/blevesearch/snowballstem/hungarian"
	"github.com/blevesearch/snowballstem/italian"
	"github.com/blevesearch/snowballstem/norwegian"
	"github.com/blevesearch/snowballstem/portuguese"
	"github.com/blevesearch/snowballstem/romanian"
	"github.com/blevesearch/snowballstem/russian"
	"github.com/blevesearch/snowballstem/spanish"
	"github.com/blevesearch/snowballstem/swedish"
	"github.com/blevesearch/snowballstem/turkish"
	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// Language analyses the words of one language other than English: Unicode NFKC and case folding, the language's
// Snowball stemmer and stopword list when it has them, and Chinese, Japanese and Korean runs as overlapping
// character bigrams. English has no Language (Base and LanguageOf give nil for it): its text takes Terms, Stem
// and IsStopword, the analysis every index was built with before languages were told apart.
//
// A Language is immutable and safe for concurrent use.
type Language struct {
	tag  string
	stem func(*snowballstem.Env) bool
	// stemWord is the stemmer of a language that Snowball has none for (Polish's Stempel), used when stem is nil.
	stemWord func(string) string
	// word rewrites a word before it is stemmed, and stems end its Snowball stem, where the stemmer leaves a
	// word and those made from it apart (see stems.go).
	word  func(string) string
	stems []stemEnd
	stop  map[string]struct{}
	// plain rewrites a folded word before it is looked up or stemmed, for a language whose words are matched
	// without some of their marks: Greek's accents, which its stopword list leaves out and writers often do.
	plain func(string) string
	// compounds says the language writes compound nouns as one word (German, Dutch, the Scandinavian
	// languages), which Decompound splits; link are the joining sounds it puts between their parts.
	compounds bool
	link      []string
	// elision are the words the language shortens to a letter or two and an apostrophe before a vowel, joined to
	// the next word (French "l'utilisateur", "d'attente", Italian "dell'archivio"), which Normalize separates.
	elision map[string]bool
}

// Base is the primary language subtag of a BCP 47 tag, lowercase ("de-CH" and "DE_de" are "de"); "" for an
// empty or malformed tag. The English tags and "" both mean English.
func Base(tag string) string {
	tag = strings.TrimSpace(tag)
	if i := strings.IndexAny(tag, "-_"); i >= 0 {
		tag = tag[:i]
	}
	if len(tag) < 2 || len(tag) > 3 {
		return ""
	}
	for i := 0; i < len(tag); i++ {
		if c := tag[i] | 0x20; c < 'a' || c > 'z' {
			return ""
		}
	}
	return strings.ToLower(tag)
}

// IsEnglish reports whether tag names English or no language: text that takes the English analysis.
func IsEnglish(tag string) bool {
	b := Base(tag)
	return b == "" || b == "en"
}

// LanguageOf returns the analysis of the language tag names (any BCP 47 tag; only its primary subtag counts),
// or nil for English and for no tag. A language without a stemmer or stopword list here still gets the
// normalisation and the CJK bigrams.
func LanguageOf(tag string) *Language {
	b := Base(tag)
	if b == "" || b == "en" {
		return nil
	}
	if l, ok := languages[b]; ok {
		return l
	}
	return &Language{tag: b}
}

// Tag is the language's primary subtag ("de").
func (l *Language) Tag() string { return l.tag }

// Compounds reports whether the language writes compound nouns as one word, which Decompound splits.
func (l *Language) Compounds() bool { return l.compounds }

// Stemmed reports whether the language has a stemmer here (Snowball's, or Polish's Stempel).
func (l *Language) Stemmed() bool { return l.stem != nil || l.stemWord != nil }

// IsStopword reports whether w, a word as Words gives it, is one of the language's stopwords. A nil Language is
// English, as LanguageOf gives it: its stopwords are IsStopword's.
func (l *Language) IsStopword(w string) bool {
	if l == nil {
		return IsStopword(w)
	}
	return l.isFoldedStopword(fold(w))
}

// isFoldedStopword is IsStopword for a word already folded (see read): a caller that asks several languages
// folds the word once.
func (l *Language) isFoldedStopword(f string) bool {
	if l.plain != nil {
		f = l.plain(f)
	}
	_, ok := l.stop[f]
	return ok
}

// read is w as the language's stopwords and stems are looked up: folded, and without the marks it matches words
// without (plain).
func (l *Language) read(w string) string {
	w = fold(w)
	if l.plain != nil {
		w = l.plain(w)
	}
	return w
}

// Stem returns the Snowball stem of w (Stempel's for Polish), folded (and, in Greek, without accents); w itself,
// so read, for a language without a stemmer.
func (l *Language) Stem(w string) string {
	w = l.read(w)
	if l.stemWord != nil && hasLetter(w) {
		return l.stemWord(w)
	}
	if l.stem == nil || !hasLetter(w) {
		return w
	}
	if l.word != nil {
		w = l.word(w)
	}
	env := snowballstem.NewEnv(w)
	l.stem(env)
	return trimStem(env.Current(), l.stems)
}

// Normalize returns s in Unicode NFKC, the form that the language's words are cut from: full-width Latin
// letters and digits become ASCII, half-width katakana full-width, ligatures their letters. In French and
// Italian an elided word and its apostrophe are set apart from the word they lean on ("l'utilisateur" is
// "l utilisateur"): Words keeps a word whole across an apostrophe ("don't" is "dont"), which made French
// "d'attente" the word "dattente", a term that no question's "attente" met.
func (l *Language) Normalize(s string) string {
	s = norm.NFKC.String(s)
	if l.elision == nil || !strings.ContainsAny(s, "'’") {
		return s
	}
	var b strings.Builder
	last := 0
	for i, r := range s {
		if r != '\'' && r != '’' {
			continue
		}
		start := i
		for start > 0 {
			p, size := utf8.DecodeLastRuneInString(s[:start])
			if !unicode.IsLetter(p) {
				break
			}
			start -= size
		}
		// An elided word starts a word: the "n" of "rock'n'roll" does not.
		if p, _ := utf8.DecodeLastRuneInString(s[:start]); start > 0 && (p == '\'' || p == '\u2019') {
			continue
		}
		if start < i && l.elision[fold(s[start:i])] {
			b.WriteString(s[last:i])
			b.WriteByte(' ')
			last = i + utf8.RuneLen(r)
		}
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// elided makes the set of a language's elided words.
func elided(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

// WordTerms calls yield with the terms of one word from Words: nothing for a stopword; its CJK runs as
// overlapping character bigrams but those of two hiragana (a run of one character is a term of one), its runs of
// Thai, Lao, Khmer or Myanmar as overlapping bigrams of their clusters (clusterBigrams), with any other letters of
// the word stemmed as one word; else its stem. Options may turn the stemmer and the bigrams off, for ablations.
func (l *Language) WordTerms(w string, opt Options, yield func(term string)) {
	if !hasSpaceless(w) {
		if !opt.KeepStopwords && l.IsStopword(w) {
			return
		}
		if opt.NoStem {
			yield(fold(w))
			return
		}
		yield(l.Stem(w))
		return
	}
	if opt.NoBigrams {
		yield(fold(w))
		return
	}
	// Split the word into runs of scripts written without spaces (cjk) and other runs.
	start, cjk := 0, false
	flush := func(end int) {
		if start >= end {
			return
		}
		part := w[start:end]
		switch r, _ := utf8.DecodeRuneInString(part); {
		case cjk && isSoutheastAsian(r):
			clusterBigrams(part, yield)
		case cjk:
			bigrams(katakanaStem(part), opt.WordBigrams, yield)
		case opt.KeepStopwords || !l.IsStopword(part):
			if opt.NoStem {
				yield(fold(part))
			} else {
				yield(l.Stem(part))
			}
		}
	}
	for i, r := range w {
		c := isSpaceless(r)
		if i == 0 {
			cjk = c
			continue
		}
		if c != cjk {
			flush(i)
			start, cjk = i, c
		}
	}
	flush(len(w))
}

// Options turn parts of a Language's analysis off, for ablations and for callers that want words whole. The
// zero value is the full analysis.
type Options struct {
	// KeepStopwords keeps stopwords as terms.
	KeepStopwords bool
	// NoStem keeps words unstemmed (folded only).
	NoStem bool
	// NoBigrams keeps a CJK run as one term.
	NoBigrams bool
	// NoCompounds leaves compounds whole (Decompound finds no parts).
	NoCompounds bool
	// WordBigrams leaves out the bigrams of a CJK run that join two words rather than two characters of one:
	// where katakana meets hiragana ("インストールされ": a loanword and the verb it is used as), and where hiragana
	// meets kanji or katakana ("を一覧", "にインストール": a particle and the next word). Choosing an answer's
	// sentence leaves them out, since every sentence has such joins and a short one is made of little else;
	// search keeps them (without them the Debian Reference's Japanese questions found one fact fewer).
	WordBigrams bool
}

// bigrams yields the overlapping character bigrams of run, a string of CJK characters, but for those of two
// hiragana; a single character is its own term, unless it is hiragana. Japanese writes its content words in kanji
// and katakana and its particles, verb endings and auxiliaries in hiragana ("を", "には", "しますか"): a bigram
// of two hiragana is grammar that every page holds, which in a short question outweighs the one or two bigrams
// of the thing asked about (BM25's IDF leaves it a small weight, but one per occurrence, and a question has many).
// A bigram that joins a hiragana to a kanji or katakana stays: it is how a verb's stem meets its ending.
func bigrams(run string, words bool, yield func(term string)) {
	prev := -1
	n := 0
	var prevRune rune
	for i, r := range run {
		if prev >= 0 && !(isHiragana(prevRune) && isHiragana(r)) && !(words && joinsWords(prevRune, r)) {
			_, size := utf8.DecodeRuneInString(run[i:])
			yield(run[prev : i+size])
		}
		prev, prevRune = i, r
		n++
	}
	if n == 1 && !isHiragana(prevRune) {
		yield(run)
	}
}

func isHiragana(r rune) bool { return unicode.Is(unicode.Hiragana, r) }

// joinsWords reports whether characters a and b, in this order, are most likely the ends of two words
// (Options.WordBigrams): a katakana (or its prolonged sound mark) before a hiragana, a hiragana before anything
// else. A kanji before a hiragana is a verb's or adjective's stem and its ending ("始まる", "新しい"): it stays.
func joinsWords(a, b rune) bool {
	katakana := a == 'ー' || unicode.Is(unicode.Katakana, a)
	return katakana && isHiragana(b) || isHiragana(a) && !isHiragana(b)
}

// katakanaStem drops the prolonged sound mark "ー" that ends a katakana word of four characters or more, which
// Japanese writes or leaves out for the same word ("サーバー" and "サーバ", "ユーザー" and "ユーザ" are both on
// one page of the Debian Reference): the normalisation of JIS Z 8301's rule for technical terms, as Japanese
// search engines apply it. run is a CJK run; its katakana words are its runs of katakana.
func katakanaStem(run string) string {
	if !strings.Contains(run, "ー") {
		return run
	}
	var b strings.Builder
	n, last := 0, 0 // the katakana word's length so far, and what of run is written
	for i, r := range run {
		if unicode.Is(unicode.Katakana, r) || r == 'ー' {
			n++
			continue
		}
		if n >= 4 && strings.HasSuffix(run[:i], "ー") {
			b.WriteString(run[last : i-len("ー")])
			last = i
		}
		n = 0
	}
	if n >= 4 && strings.HasSuffix(run, "ー") {
		b.WriteString(run[last : len(run)-len("ー")])
		last = len(run)
	}
	if last == 0 {
		return run
	}
	b.WriteString(run[last:])
	return b.String()
}

// MinCompound is the shortest word, in letters, that Decompound tries to split; each part has at least
// MinCompoundPart letters.
const (
	MinCompound     = 8
	MinCompoundPart = 3
)

// Decompound returns the parts of w, a word of a language that writes compounds as one word, as terms (stems):
// the longest leading part whose term known reports (the site's own vocabulary), a joining sound after it
// dropped, then the rest split the same way, or else taken whole (as the longest known term its stem starts
// with, within three letters). It returns nil when w is not a compound or the language has no compounds: on a
// site that writes "Zeile" and "nummerieren" on their own, "zeilennummerierung" is "zeil" and "nummeri".
func (l *Language) Decompound(w string, opt Options, known func(term string) bool) []string {
	if !l.compounds || opt.NoCompounds || utf8.RuneCountInString(w) < MinCompound || hasSpaceless(w) {
		return nil
	}
	w = fold(w)
	return l.split(w, known, 0)
}

func (l *Language) split(w string, known func(string) bool, depth int) []string {
	runes := []rune(w)
	// A split whose parts the vocabulary both knows comes first, then one whose head it knows as it is written,
	// then one whose head it knows once a joining sound is dropped; the longest head first in each ("zeilen"
	// before "zeile").
	passes := 3
	if depth > 0 {
		passes = 1 // the rest of a compound splits only into known parts
	}
	for pass := range passes {
		for i := len(runes) - MinCompoundPart - 1; i >= MinCompoundPart; i-- {
			head, tail := string(runes[:i]), string(runes[i:])
			ht := l.headTerm(head, known, pass != 1)
			if ht == "" {
				continue
			}
			tt := l.Stem(tail)
			switch {
			case pass == 0 && known(tt):
				return []string{ht, tt}
			case pass == 0 && depth < 2 && utf8.RuneCountInString(tail) >= MinCompound:
				if parts := l.split(tail, known, depth+1); parts != nil {
					return append([]string{ht}, parts...)
				}
			case pass > 0 && utf8.RuneCountInString(tail) > MinCompoundPart && !l.IsStopword(tail):
				return []string{ht, knownPrefix(tt, known)}
			}
		}
	}
	return nil
}

// knownPrefix is the longest term known reports that term starts with and that lacks at most three of its
// letters (a stemmer leaves derivations apart: German "nummerierung" is "nummerier", "nummerieren"
// "nummeri"), else term itself.
func knownPrefix(term string, known func(string) bool) string {
	runes := []rune(term)
	for n := len(runes) - 1; n >= max(len(runes)-3, MinCompoundPart+1); n-- {
		if p := string(runes[:n]); known(p) {
			return p
		}
	}
	return term
}

// headTerm is the term of head, a compound's leading part, when the vocabulary knows it (as it is, or, when
// linked is set, also with its joining sound dropped), else "".
func (l *Language) headTerm(head string, known func(string) bool, linked bool) string {
	if l.IsStopword(head) {
		return ""
	}
	if t := l.Stem(head); utf8.RuneCountInString(t) >= MinCompoundPart && known(t) {
		return t
	}
	if !linked {
		return ""
	}
	for _, s := range l.link {
		if h, ok := strings.CutSuffix(head, s); ok && utf8.RuneCountInString(h) >= MinCompoundPart && !l.IsStopword(h) {
			if t := l.Stem(h); utf8.RuneCountInString(t) >= MinCompoundPart && known(t) {
				return t
			}
		}
	}
	return ""
}

// fold folds case as Unicode's full case folding does ("ß" is "ss"); a cases.Caser holds state, so each call
// takes its own.
func fold(w string) string {
	ascii := true
	for i := 0; i < len(w); i++ {
		if c := w[i]; c >= utf8.RuneSelf || 'A' <= c && c <= 'Z' {
			ascii = false
			break
		}
	}
	if ascii {
		return w
	}
	return cases.Fold().String(w)
}

func hasLetter(w string) bool {
	for _, r := range w {
		if unicode.IsLetter(r) {
			return true
		}
	}
	return false
}

// isCJK reports whether r is written without spaces between words: Han ideographs, kana and Hangul.
func isCJK(r rune) bool {
	return r >= 0x2E80 && (unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) ||
		unicode.Is(unicode.Katakana, r) || unicode.Is(unicode.Hangul, r) || r == 'ー')
}

// isSoutheastAsian reports whether r is of a script of Southeast Asia written without spaces between words (a
// space ends a phrase or a sentence): Thai, Lao, Khmer and Myanmar, their vowel signs and marks included.
func isSoutheastAsian(r rune) bool {
	return r >= 0x0E00 && r <= 0x109F && (unicode.Is(unicode.Thai, r) || unicode.Is(unicode.Lao, r) ||
		unicode.Is(unicode.Myanmar, r)) || r >= 0x1780 && r <= 0x17FF
}

// isSpaceless reports whether r is of a script written without spaces between words.
func isSpaceless(r rune) bool { return isCJK(r) || isSoutheastAsian(r) }

// hasSpaceless reports whether w holds a character of a script written without spaces between words (CJK, or
// isSoutheastAsian).
func hasSpaceless(w string) bool {
	for i := 0; i < len(w); i++ {
		if w[i] >= 0xE0 { // every such character's UTF-8 form starts at 0xE0 or above
			r, _ := utf8.DecodeRuneInString(w[i:])
			if isSpaceless(r) {
				return true
			}
		}
	}
	return false
}

// clusterBigrams yields the overlapping bigrams of run's clusters, run a string of a Southeast Asian script: a
// cluster is a letter with the marks and vowel signs written on or around it, and in Khmer and Myanmar the
// consonant a coeng or virama stacks below it ("ន្ថែ" is one). A bigram of code points would cut a syllable
// between its consonant and its vowel, and match it to any other syllable cut the same way. A run of one cluster
// is its own term.
func clusterBigrams(run string, yield func(term string)) {
	var starts []int
	stacked := false
	for i, r := range run {
		if len(starts) == 0 || !unicode.IsMark(r) && !stacked {
			starts = append(starts, i)
		}
		stacked = r == '\u17D2' || r == '\u1039' // Khmer coeng, Myanmar virama: the next consonant stacks
	}
	if len(starts) == 1 {
		yield(run)
		return
	}
	starts = append(starts, len(run))
	for i := 0; i+2 < len(starts); i++ {
		yield(run[starts[i]:starts[i+2]])
	}
}

// ScriptLanguage is the language a text's script alone tells: "ja" when it holds kana, "ko" for Hangul, "zh" for
// Han ideographs without either; "" when the text has none of them.
func ScriptLanguage(s string) string {
	han, kana, hangul := 0, 0, 0
	for _, r := range s {
		if r < 0x2E80 {
			continue
		}
		switch {
		case unicode.Is(unicode.Hiragana, r) || unicode.Is(unicode.Katakana, r):
			kana++
		case unicode.Is(unicode.Hangul, r):
			hangul++
		case unicode.Is(unicode.Han, r):
			han++
		}
	}
	switch {
	case kana > 0:
		return "ja"
	case hangul > 0:
		return "ko"
	case han > 0:
		return "zh"
	}
	return ""
}

// Analysed returns the languages with an analysis of their own here (ISO 639-1: a Snowball stemmer and stopword
// list, or CJK bigrams), English first and the others sorted: the languages Detect may be asked to choose among
// for a text whose language nothing else tells. The list is made once; each call returns a copy of it.
func Analysed() []string { return slices.Clone(analysed()) }

var analysed = sync.OnceValue(func() []string {
	out := []string{"en"}
	for tag := range languages {
		if tag != "nb" && tag != "nn" { // Norwegian's written standards, analysed as "no"
			out = append(out, tag)
		}
	}
	slices.Sort(out[1:])
	return out
})

var languages = func() map[string]*Language {
	m := map[string]*Language{
		"de": {stem: german.Stem, word: germanParticiple, stems: germanStems, stop: stopList(stopDE), compounds: true,
			link: []string{"s", "es", "n", "en", "e", "er"}},
		"nl": {stem: dutch.Stem, stop: stopList(stopNL), compounds: true, link: []string{"s", "en", "e"}},
		"sv": {stem: swedish.Stem, stop: stopList(stopSV), compounds: true, link: []string{"s", "a", "o", "u", "e"}},
		"da": {stem: danish.Stem, stop: stopList(stopDA), compounds: true, link: []string{"s", "e"}},
		"no": {stem: norwegian.Stem, stop: stopList(stopNO), compounds: true, link: []string{"s", "e"}},
		"fr": {stem: french.Stem, stems: frenchStems, stop: stopList(stopFR),
			elision: elided("c", "d", "j", "l", "m", "n", "s", "t", "qu", "jusqu", "lorsqu", "puisqu", "quoiqu")},
		"es": {stem: spanish.Stem, stop: stopList(stopES)},
		"it": {stem: italian.Stem, stop: stopList(stopIT),
			elision: elided("c", "d", "l", "m", "s", "t", "v", "un", "all", "dall", "dell", "nell", "sull", "coll", "quest", "quell")},
		"pt": {stem: portuguese.Stem, stop: stopList(stopPT)},
		"fi": {stem: finnish.Stem, stop: stopList(stopFI)},
		"ru": {stem: russian.Stem, word: russianYo, stop: stopList(stopRU)},
		"ro": {stem: romanian.Stem, stop: stopList(stopRO)},
		"hu": {stem: hungarian.Stem, stop: stopList(stopHU)},
		"tr": {stem: turkish.Stem, stop: stopList(stopTR)},
		"ar": {stem: arabic.Stem, stop: stopList(stopAR)},
		"fa": {stop: stopList(stopFA), plain: persianPlain},
		// Without a Snowball stemmer here: their words are matched as written, their stopwords left out.
		"ca": {stop: stopList(stopCA), elision: elided("d", "l", "m", "n", "s", "t")},
		"cs": {stop: stopList(stopCS)},
		"el": {stop: stopList(stopEL), plain: withoutAccents},
		"id": {stop: stopList(stopID)},
		"pl": {stemWord: polishStem, stop: stopList(stopPL)},
		"hi": {stop: stopList(stopHI)},
		"ja": {}, "zh": {}, "ko": {}, "th": {}, "lo": {}, "km": {}, "my": {},
		// Without a stemmer or stopwords here, listed so that a question in them is told as theirs, not as the
		// closest listed language's (Vietnamese was Indonesian).
		"vi": {}, "he": {},
	}
	for tag, l := range m {
		l.tag = tag
		if l.plain != nil { // the list's words are looked up as the text's are read
			stop := make(map[string]struct{}, len(l.stop))
			for w := range l.stop {
				stop[l.plain(w)] = struct{}{}
			}
			l.stop = stop
		}
	}
	m["nb"], m["nn"] = m["no"], m["no"]
	return m
}()
