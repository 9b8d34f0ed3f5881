package retrieval

import "strings"

// Sentences that refer back. Documentation often states a fact in the sentence after the one that names what
// it is about: "RAID-6 can be considered an extension of RAID-5 … This RAID level … brings some extra safety
// since up to two drives can fail", "The account remains intact … it is simply inaccessible. This is
// accomplished by using the command passwd -l user". The second sentence opens with a demonstrative and repeats none of the
// question's words; read alone, it answers nothing. Text linguistics calls this anaphora, and reading such a
// sentence with the one before it (its antecedent) is how a reader takes it in. A unit that opens with one is
// scored holding the question terms of the sentence before it in its paragraph as well.
//
// Only demonstratives and "such"/"both" count, alone or after a preposition ("In this case", "Dans ce cas",
// "In diesem Fall"): a personal pronoun ("It", "They") opens as many sentences whose antecedent is a whole
// section, and on the English sets counting them lost a fact for each one gained.

// anaphora is how a language opens a sentence that refers back: its demonstratives (words read lower case and
// without accents), the prepositions they may follow, and, for a language written without spaces, the prefixes
// such a sentence starts with.
type anaphora struct {
	words, prepositions map[string]bool
	prefixes            []string
}

// anaphoraLanguages are the languages whose back references are read, by primary subtag.
var anaphoraLanguages = map[string]anaphora{
	"en": {words: setOf("this", "these", "that", "those", "such", "both"),
		prepositions: setOf("in", "for", "with", "by", "on", "at", "of", "from", "under", "to", "after", "before", "during")},
	"de": {words: setOf("dies", "diese", "dieser", "dieses", "diesem", "diesen", "solche", "solcher", "solches", "solchen",
		"beide", "beiden", "dabei", "damit", "dazu", "dadurch", "dafur", "hierbei", "hierzu", "hierfur"),
		prepositions: setOf("in", "bei", "mit", "fur", "von", "nach", "unter", "aus", "zu", "vor")},
	"fr": {words: setOf("ce", "cet", "cette", "ces", "cela", "ceci", "tel", "telle", "tels", "telles"),
		prepositions: setOf("dans", "pour", "avec", "par", "en", "sur", "de", "a", "apres", "avant")},
	"es": {words: setOf("este", "esta", "estos", "estas", "esto", "ese", "esa", "esos", "esas", "eso", "dicho", "dicha",
		"dichos", "dichas", "tal", "tales", "ambos", "ambas"),
		prepositions: setOf("en", "para", "con", "por", "de", "a", "sobre", "tras")},
	"it": {words: setOf("questo", "questa", "questi", "queste", "cio", "tale", "tali", "entrambi", "entrambe"),
		prepositions: setOf("in", "per", "con", "da", "di", "a", "su", "dopo")},
	"pt": {words: setOf("este", "esta", "estes", "estas", "isto", "esse", "essa", "esses", "essas", "isso", "tal", "tais",
		"ambos", "ambas", "neste", "nesta", "nesse", "nessa", "nisso", "nisto", "deste", "desta", "desse", "dessa", "disso", "disto"),
		prepositions: setOf("em", "para", "com", "por", "de", "a", "sobre", "apos")},
	"ru": {words: setOf("это", "этот", "эта", "эти", "этого", "этой", "этих", "этим", "этом", "такой", "такая", "такие",
		"такое", "оба", "обе"),
		prepositions: setOf("в", "при", "для", "с", "после", "из", "по", "на")},
	"ja": {prefixes: []string{"この", "その", "これ", "それ", "こうした", "そうした", "こうして", "そのため"}},
	"zh": {prefixes: []string{"这", "此", "该", "上述"}},
}

// refersBack reports whether text, a sentence in the language lang, opens with a back reference: a demonstrative,
// alone or after a preposition ("This RAID level …", "In that case, …"). A language without a list reads as
// English.
func refersBack(lang, text string) bool {
	a := ofLanguage(anaphoraLanguages, lang)
	for _, p := range a.prefixes {
		if strings.HasPrefix(text, p) {
			return true
		}
	}
	if a.words == nil {
		return false
	}
	first, rest, _ := strings.Cut(text, " ")
	if holds(a.words, first) {
		return true
	}
	second, _, _ := strings.Cut(rest, " ")
	return holds(a.prepositions, first) && holds(a.words, second)
}

// holds reports whether set holds field read as shapeWord reads it, without allocating for a word of at most 16
// ASCII letters (a sentence's first word is mostly capitalised).
func holds(set map[string]bool, field string) bool {
	w := strings.Trim(field, wordMarks)
	var buf [16]byte
	if len(w) > len(buf) {
		return set[shapeWord(w)]
	}
	for i := 0; i < len(w); i++ {
		c := w[i]
		if c >= 0x80 {
			return set[shapeWord(w)]
		}
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf[i] = c
	}
	return set[string(buf[:len(w)])]
}
