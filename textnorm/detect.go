package textnorm

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/abadojack/whatlanggo"
)

// MinDetectLetters is the fewest letters a text needs for Detect to name a language by its words rather than
// leave it to the caller's default when any language may be the answer: on fewer, trigram statistics confuse
// close languages ("Where is the config file?" reads as Portuguese as easily as English). MinChoiceLetters is
// the fewest when the choice is among a few languages (a site's), where a question of a few words already
// tells German from French and English.
const (
	MinDetectLetters = 40
	MinChoiceLetters = 15
)

// Detect returns the language of text as an ISO 639-1 code, chosen among among (codes; nil: any language the
// detector knows), and whether it is sure. A script that only one language among writes (kana, Hangul, Han)
// decides at once; otherwise the text's letter trigrams are compared with each language's (whatlanggo, MIT
// licence). Among any language, a text of fewer than MinDetectLetters letters, or whose best language is not
// clearly ahead, gives ok false; among a few, the best of them is the answer for a text of MinChoiceLetters
// letters or more. With a single language in among, that language is the answer.
func Detect(text string, among []string) (lang string, ok bool) { return detect(text, among, false) }

// detect is Detect; reliable asks, also among a few languages, for MinDetectLetters letters and an answer the
// detector calls reliable.
func detect(text string, among []string, reliable bool) (lang string, ok bool) {
	if len(among) == 1 {
		return among[0], true
	}
	if s := ScriptLanguage(text); s != "" {
		if among == nil || slices.Contains(among, s) {
			return s, true
		}
		// A Japanese site's question may be all kanji: Han text reads as the site's CJK language.
		if s == "zh" && slices.Contains(among, "ja") {
			return "ja", true
		}
	}
	if s := scriptAmong(text, among, true); s != "" {
		return s, true
	}
	letters := letterCount(text)
	if letters < MinChoiceLetters || (among == nil || reliable) && letters < MinDetectLetters {
		return "", false
	}
	code, sure, ok := trigrams(text, among)
	if !ok || among == nil && !sure && letters < 4*MinDetectLetters || reliable && !sure {
		return "", false
	}
	return code, true
}

// trigrams is the language among among (nil: any) whose letter trigrams are closest to text's, and whether the
// detector calls that reliable; ok is false when it names none of them.
func trigrams(text string, among []string) (lang string, reliable, ok bool) {
	opt := whatlanggo.Options{}
	if among != nil {
		opt.Whitelist = map[whatlanggo.Lang]bool{}
		for _, code := range among {
			if l, ok := whatlangByCode[code]; ok {
				opt.Whitelist[l] = true
			}
		}
		if len(opt.Whitelist) == 0 {
			return "", false, false
		}
	}
	info := whatlanggo.DetectWithOptions(text, opt)
	code := codeOf(info.Lang)
	return code, info.IsReliable(), code != ""
}

// knownToTrigrams reports whether the detector has trigrams for the language code.
func knownToTrigrams(code string) bool {
	_, ok := whatlangByCode[code]
	return ok
}

// whatlangByCode maps ISO 639-1 codes to the detector's languages.
var whatlangByCode = func() map[string]whatlanggo.Lang {
	m := map[string]whatlanggo.Lang{}
	for l := whatlanggo.Lang(0); l <= whatlanggo.Zul; l++ {
		if code := codeOf(l); code != "" {
			m[code] = l
		}
	}
	m["zh"] = whatlanggo.Cmn
	m["no"] = whatlanggo.Nob // Norwegian as analysed ("nb" and "nn" are read as "no"): Bokmål, as most of it is written
	return m
}()

// codeOf is the ISO 639-1 code of the detector's language, "" for one without. The detector names Persian by
// its ISO 639-3 code for Iranian Persian alone ("pes"); its pages and questions are "fa".
func codeOf(l whatlanggo.Lang) string {
	if l == whatlanggo.Pes {
		return "fa"
	}
	return l.Iso6391()
}

// Name is the English name of the language tag names ("German" for "de-CH"), as the detector names its
// languages, or "" for a language it does not know. Chinese and Norwegian are named as such rather than by the
// detector's narrower Mandarin and Bokmål.
func Name(tag string) string {
	switch b := Base(tag); b {
	case "zh":
		return "Chinese"
	case "no", "nb":
		return "Norwegian"
	case "ca": // the detector has no Catalan
		return "Catalan"
	default:
		if l, ok := whatlangByCode[b]; ok {
			return l.String()
		}
	}
	return ""
}

// Bounds of DetectProse's reading by stopwords: the most frequent language's stopwords number at least
// minProseStopwords, proseLead times the next language's, and a proseShare-th of the text's words, and nine
// letters in ten are in that language's script. Running prose is mostly function words (a third to a half of
// an English paragraph's words); a text that has them in such numbers is in their language, and only a text
// that has not needs trigrams. The bounds leave close languages to trigrams (Spanish, Portuguese and Catalan,
// Danish and Norwegian share too many stopwords to lead threefold), and languages with no stopword list here:
// LibreOffice's Slovak help never reads as Czech by them, nor a Khmer or Vietnamese page with English steps as
// English.
const (
	minProseStopwords = 8
	proseLead         = 3
	proseShare        = 4
)

// DetectProse is Detect for a page's running text among any language: its stopwords decide when they
// overwhelmingly name one language among Analysed (see minProseStopwords), else its trigrams do, as Detect reads
// them. The stopword count is about a hundredth of the trigrams' cost, which was a sixth of a site's ingest when
// its pages declare no language (PostgreSQL's manual); on 13,360 pages of eleven sites in 25 languages, where it
// decides (about half of them) it names the language the trigrams do, but for six Dutch LibreOffice Help pages
// that the trigrams called Afrikaans or left unsure.
func DetectProse(text string) (lang string, ok bool) {
	if ScriptLanguage(text) == "" {
		if l, ok := proseStopwords(text); ok {
			return l, true
		}
	}
	return Detect(text, nil)
}

// proseStopwords is the language whose stopwords make up text, within DetectProse's bounds.
func proseStopwords(text string) (string, bool) {
	counts, words := stopwordCounts(text, analysed())
	best, next := leader(counts) // analysed() holds English at least
	n := counts[best].n
	if n < minProseStopwords || n < proseLead*next || proseShare*n < words || !inScript(text, counts[best].lang, 0.9) {
		return "", false
	}
	return counts[best].lang, true
}

// inScript reports whether at least share of text's letters are in the script lang is written in (Latin unless
// scripts names another).
func inScript(text, lang string, share float64) bool {
	table := unicode.Latin
	for _, s := range scripts {
		if slices.Contains(s.langs, lang) {
			table = s.table
		}
	}
	letters, in := 0, 0
	for _, r := range text {
		if unicode.IsLetter(r) {
			letters++
			if unicode.Is(table, r) {
				in++
			}
		}
	}
	return float64(in) >= share*float64(letters)
}

// MinPassageStopwords is the fewest stopwords of its language that DetectPassage needs to name a passage's
// language by them, and the lead it needs over the next language's count.
const MinPassageStopwords = 3

// DetectPassage is Detect for a passage of text (a paragraph or more) among a few languages, at a fraction of
// its cost: a script that only one language among writes decides at once; otherwise each language's stopwords
// among the passage's words are counted (English's and the Snowball lists of the others), and the language with
// the most wins when it has MinPassageStopwords or more and that many more than the next. Function words are
// what a passage is made of and what each language has its own of, which trigram statistics must infer
// from a few hundred letters at many times the cost (Detect is about 0.4 ms on 2 KB of text, this about a
// hundredth of it). A passage they do not tell apart (a table of commands) goes to Detect.
func DetectPassage(text string, among []string) (lang string, ok bool) {
	lang, ok, _ = detectByWords(text, among, MinPassageStopwords, false)
	return lang, ok
}

// MinQuestionStopwords is the fewest stopwords of its language that DetectQuestion needs to name a question's
// language by them, and the lead it needs over the next language's count.
const MinQuestionStopwords = 2

// DetectQuestion is Detect for a question among a site's languages. A question is short and technical: its
// commands and names ("approx", "pg_ctl", "max_connections") are most of its letters, and trigram statistics read
// them as any language ("approx apt cache - what port does it listen on by default?" was German to them). So a
// script decides first, then the question's stopwords as DetectPassage counts them (MinQuestionStopwords of one
// language, and that many more than any other's), then trigrams: as Detect reads them for a question with a
// letter English does not write ("Tastaturbelegung ändern?"), else only on MinDetectLetters letters or more and
// when the detector calls its answer reliable; a question with more stopwords of other languages than of among[0]
// (the caller's default) is read as the best of the languages with the most by trigrams. Otherwise ok is false and
// the caller's default applies (the site's main language).
func DetectQuestion(text string, among []string) (lang string, ok bool) {
	lang, ok, _ = detectByWords(text, among, MinQuestionStopwords, true)
	return lang, ok
}

// DetectQuestionTie is DetectQuestion, and when it chose by trigrams among several languages that the stopword
// vote left level (none of them among[0]), those languages, else nil. Trigrams of a few words are a weak witness
// ("a cosa serve la directory /srv?" has the "a" and "la" of Italian and of Spanish, and its trigrams read
// Spanish): a caller that knows which of them the site writes the question's words in can choose better.
func DetectQuestionTie(text string, among []string) (lang string, ok bool, tied []string) {
	return detectByWords(text, among, MinQuestionStopwords, true)
}

// DetectAmongMany is Detect for a short text (a question and its answer) whose language may be any of many
// (among, nil for any): a script that only one language among writes decides, else a stopword vote as
// DetectQuestion's (MinQuestionStopwords of one language, and that many more than any other's), else the best by
// trigrams of the languages with the most stopwords (MinQuestionStopwords or more), else the detector's trigrams
// as for a text of any language (MinDetectLetters letters or more and a reliable answer) when that language is
// among. Among many languages the trigrams of a few words tell none: "Parkplätze? Parkplatz B."
// is French to them when they must choose.
func DetectAmongMany(text string, among []string) (lang string, ok bool) {
	if s := ScriptLanguage(text); s != "" {
		return Detect(text, among)
	}
	if s := scriptAmong(text, among, false); s != "" {
		return s, true
	}
	counts, _ := stopwordCounts(text, among)
	if l, ok := stopwordVote(counts, MinQuestionStopwords); ok {
		return l, true
	}
	if leaders := stopwordLeaders(counts, MinQuestionStopwords); len(leaders) > 0 {
		return detect(text, contenders(counts, leaders, MinQuestionStopwords), false) // the best of a few, by trigrams
	}
	if l, ok := Detect(text, nil); ok && (among == nil || slices.Contains(among, l)) {
		return l, true
	}
	return "", false
}

// detectByWords tells text's language among among by its script, else by a stopword vote needing min, else by
// trigrams (detect, reliable as asked); tied are the languages the vote left level when trigrams chose among them
// (see DetectQuestionTie).
func detectByWords(text string, among []string, min int, reliable bool) (lang string, ok bool, tied []string) {
	if len(among) == 1 {
		return among[0], true, nil
	}
	if ScriptLanguage(text) != "" {
		lang, ok = Detect(text, among)
		return lang, ok, nil
	}
	if s := scriptAmong(text, among, !reliable); s != "" {
		return s, true, nil
	}
	// A question quoting a message ("dpkg-feil 'trying to overwrite ... which is also in package' – hvordan
	// tvinger jeg …") is in the language of its own words, not the software's: they decide when they are enough.
	if reliable {
		if rest := unquoted(text); rest != text && letterCount(rest) >= MinChoiceLetters {
			text = rest
		}
	}
	// Spanish alone opens a question or an exclamation with an inverted mark; Portuguese, whose trigrams are
	// close to Spanish's, never does ("¿cuántos discos pueden morir antes de que pierda datos?" was Portuguese). A
	// passage (not reliable) has stopwords enough, and may quote a Spanish line.
	if reliable && strings.ContainsAny(text, "¿¡") && slices.Contains(among, "es") {
		return "es", true, nil
	}
	// Vietnamese alone writes its horned and barred letters and its tones below and hooked above ("ư", "ơ", "đ",
	// "ạ", "ả"), and it has no stopword list here: Italian's "in" and "hai" made "tôi có thể in hai trang cạnh nhau
	// trên một tờ giấy không?" Italian.
	if reliable && vietnamese(text) && slices.Contains(among, "vi") {
		return "vi", true, nil
	}
	counts, _ := stopwordCounts(text, among)
	if l, ok := stopwordVote(counts, min); ok {
		return l, true, nil
	}
	// The detector has no trigrams for Catalan, which cannot win a vote of trigrams: when it alone has the most
	// stopwords, it is the answer ("com trec un salt de pàgina manual?" has three Catalan stopwords and two
	// Portuguese ones, and its trigrams read Portuguese).
	if leaders := stopwordLeaders(counts, min); len(leaders) == 1 && !knownToTrigrams(leaders[0]) {
		return leaders[0], true, nil
	}
	// A question with more stopwords of other languages than of the caller's default (among[0]), but no clear
	// winner among them, is in one of those: the best of them by trigrams ("comment supprimer un saut de page
	// manuel ?" has as many French stopwords as Spanish ones, no English one, and was read as English), or the
	// default when it trails them by one (contenders).
	if reliable {
		if leaders := stopwordLeaders(counts, min); len(leaders) > 0 && !slices.Contains(leaders, among[0]) {
			if len(leaders) > 1 {
				tied = leaders
			}
			if l, ok := detect(text, contenders(counts, leaders, min), false); ok {
				return l, true, tied
			}
		}
	}
	// A letter English does not write ("ä", "é") marks a text of another language: its trigrams are read as for
	// any text among a few languages ("Tastaturbelegung ändern?").
	lang, ok = detect(text, among, reliable && !accented(text))
	return lang, ok, tied
}

// vietnamese reports whether text holds two or more letters that Vietnamese alone writes: "ă", "đ", "ơ", "ư" and
// the vowels with a tone mark below or a hook above (U+1EA0 to U+1EF9, the Latin Extended Additional letters
// Vietnamese's tones make), in either case.
func vietnamese(text string) bool {
	n := 0
	for _, r := range text {
		switch {
		case r >= 0x1EA0 && r <= 0x1EF9, strings.ContainsRune("ăđơưĂĐƠƯ", r):
			n++
		}
	}
	return n >= 2
}

// letterCount is the number of letters in text.
func letterCount(text string) int {
	n := 0
	for _, r := range text {
		if unicode.IsLetter(r) {
			n++
		}
	}
	return n
}

// closingQuotes maps each opening quotation mark to the marks that close it.
var closingQuotes = map[rune]string{'\'': "'", '"': `"`, '`': "`", '‘': "’", '“': "”", '„': "“”", '«': "»", '‹': "›", '»': "«"}

// unquoted is text without its quoted spans: a quotation mark that opens a word (not an apostrophe within one,
// "l'installation", "don't") up to the mark that closes it at a word's end (guillemets also with spaces
// inside), each span left as a space. An opening mark without its closing one is kept.
func unquoted(text string) string {
	var b strings.Builder
	runes := []rune(text)
	wordRune := func(i int) bool {
		return i >= 0 && i < len(runes) && (unicode.IsLetter(runes[i]) || unicode.IsDigit(runes[i]))
	}
	for i := 0; i < len(runes); i++ {
		closing, ok := closingQuotes[runes[i]]
		spaced := strings.ContainsRune("«»‹›", runes[i]) // French writes « mot », with spaces inside
		end := -1
		if ok && !wordRune(i-1) && i+1 < len(runes) && (spaced || !unicode.IsSpace(runes[i+1])) {
			for j := i + 2; j < len(runes); j++ {
				if strings.ContainsRune(closing, runes[j]) && !wordRune(j+1) && (spaced || !unicode.IsSpace(runes[j-1])) {
					end = j
					break
				}
			}
		}
		if end < 0 {
			b.WriteRune(runes[i])
			continue
		}
		b.WriteByte(' ')
		i = end
	}
	return b.String()
}

// accented reports whether text holds a letter beyond ASCII in the Latin script.
func accented(text string) bool {
	for _, r := range text {
		if r >= utf8.RuneSelf && unicode.Is(unicode.Latin, r) {
			return true
		}
	}
	return false
}

// stopwordCount is how many of a text's words are stopwords of one language.
type stopwordCount struct {
	lang string
	n    int
}

// stopwordCounts counts each language's stopwords among text's words (English's and the Snowball lists of the
// others), and the words.
func stopwordCounts(text string, among []string) (counts []stopwordCount, words int) {
	counts = make([]stopwordCount, len(among))
	langs := make([]*Language, len(among))
	for i, code := range among {
		counts[i].lang, langs[i] = code, LanguageOf(code)
	}
	AppendWords(nil, text, func(w []byte) bool {
		words++
		s := string(w)
		f := fold(s) // once for every language, not once for each
		for i, l := range langs {
			if l == nil && IsStopword(s) || l != nil && l.isFoldedStopword(f) {
				counts[i].n++
			}
		}
		return true
	})
	return counts, words
}

// stopwordVote names the language with the most stopwords when it has min or more and that many more than the
// next.
func stopwordVote(counts []stopwordCount, min int) (string, bool) {
	best, next := leader(counts)
	if best >= 0 && counts[best].n >= min && counts[best].n-next >= min {
		return counts[best].lang, true
	}
	return "", false
}

// leader is the position in counts of the language with the most stopwords (the first of equals; -1 for no
// counts) and the count of the language with the most after it.
func leader(counts []stopwordCount) (best, next int) {
	best = -1
	for i, c := range counts {
		switch {
		case best < 0 || c.n > counts[best].n:
			if best >= 0 {
				next = counts[best].n
			}
			best = i
		case c.n > next:
			next = c.n
		}
	}
	return best, next
}

// contenders are leaders (the languages with the most stopwords), and the first of counts (the caller's default,
// English among every language) with them when it is not one of them but has min stopwords of its own and trails
// them by less than min: one more is no lead over a text that has the default's function words too, and trigrams
// choose among them all. Polish's list holds "a", "i", "o", "w" and "do": "how do i lock a users account
// temporarily w/o deleting anything" has five of them to English's four, and was Polish.
func contenders(counts []stopwordCount, leaders []string, min int) []string {
	if slices.Contains(leaders, counts[0].lang) || counts[0].n < min {
		return leaders
	}
	top := 0
	for _, c := range counts {
		top = max(top, c.n)
	}
	if top < counts[0].n+min {
		return append(slices.Clip(leaders), counts[0].lang)
	}
	return leaders
}

// stopwordLeaders are the languages with the most stopwords, when that is min or more.
func stopwordLeaders(counts []stopwordCount, min int) []string {
	top := 0
	for _, c := range counts {
		top = max(top, c.n)
	}
	var out []string
	for _, c := range counts {
		if c.n == top && top >= min {
			out = append(out, c.lang)
		}
	}
	return out
}

// scripts are the alphabets and abjads other than Latin, each with the languages written in it that the detector
// knows (ISO 639-1).
var scripts = [...]struct {
	table *unicode.RangeTable
	langs []string
}{
	{unicode.Cyrillic, []string{"ru", "uk", "be", "bg", "mk", "sr", "kk", "ky", "tg", "mn"}},
	{unicode.Greek, []string{"el"}},
	{unicode.Arabic, []string{"ar", "fa", "ur", "ps"}},
	{unicode.Hebrew, []string{"he", "yi"}},
	{unicode.Devanagari, []string{"hi", "mr", "ne"}},
	{unicode.Armenian, []string{"hy"}},
	{unicode.Georgian, []string{"ka"}},
	{unicode.Thai, []string{"th"}},
	{unicode.Lao, []string{"lo"}},
	{unicode.Khmer, []string{"km"}},
	{unicode.Myanmar, []string{"my"}},
	{unicode.Bengali, []string{"bn", "as"}},
	{unicode.Tamil, []string{"ta"}},
}

// scriptAmong is the language of among that text's script tells: text holds letters of a script other than Latin
// (those of the script with the most when several), and one language of among writes it, or of the several that
// do (Arabic and Persian, Russian and Ukrainian), its trigrams tell one; "" otherwise. A
// Russian question on a site in English and Russian is Russian however many of its letters are a command's
// ("как настроить proxy_pass в nginx?"), as kana make a question Japanese; trigrams and stopwords need more
// letters. A passage (most) must have most of its letters in the script: an English page's list of the
// translations of a book names them in their own scripts ("Русский").
func scriptAmong(text string, among []string, most bool) string {
	var counts [len(scripts)]int
	letters := 0
	for _, r := range text {
		if !unicode.IsLetter(r) {
			continue
		}
		letters++
		if r < 0x370 {
			continue // Latin
		}
		for i, s := range scripts {
			if unicode.Is(s.table, r) {
				counts[i]++
				break
			}
		}
	}
	best := -1
	for i, n := range counts {
		if n >= 2 && (best < 0 || n > counts[best]) {
			best = i
		}
	}
	if best < 0 || most && 2*counts[best] <= letters {
		return ""
	}
	var sharers []string
	for _, code := range among {
		if slices.Contains(scripts[best].langs, Base(code)) {
			sharers = append(sharers, code)
		}
	}
	if len(sharers) < 2 {
		return strings.Join(sharers, "")
	}
	// Languages of one script ("ar" and "fa", "ru" and "uk"): the letters do not tell them apart, their trigrams
	// may.
	if l, _, ok := trigrams(text, sharers); ok {
		return l
	}
	return ""
}
