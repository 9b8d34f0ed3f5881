package retrieval

import (
	"slices"
	"strings"

	"github.com/ragproxy/ragproxy/textnorm"
)

// Defaults and bounds. Documentation answers "what happens if I set nothing" with a default ("The default value
// is four megabytes", "decimal places (default 7)", "Directories are made available as read-only by default"),
// and "how big may it be" with a bound ("at least 4096 bits", "up to 32 columns", "no more than 60 units");
// visitors ask for either in other words as well: "out of the box", "if i dont specify rw or ro", "with no
// arguments"; "whats the shortest password", "the biggest release tarball". A question that asks for one is
// answered first by a unit that states one. (Of the 336 questions of the ten English dev and held-out sets, 31
// ask for a default and 19 for a bound.)

// shapeWords is how a language writes a shape: words (read without accents, lower case), words that start with
// one of prefixes (German "Standardwert", "standardmäßig"), phrases (French "par défaut"), or, in a language
// written without spaces, substrings.
type shapeWords struct {
	words      map[string]bool
	prefixes   []string
	phrases    [][]string
	substrings []string
	// byLast are phrases by their last word (init).
	byLast map[string][][]string
}

func init() {
	for _, languages := range []map[string]shapeWords{defaultLanguages, defaultCues, boundLanguages} {
		for tag, sw := range languages {
			sw.byLast = map[string][][]string{}
			for _, p := range sw.phrases {
				if len(p) > maxPhraseWords {
					panic("retrieval: a shape's phrase is longer than maxPhraseWords: " + strings.Join(p, " "))
				}
				sw.byLast[p[len(p)-1]] = append(sw.byLast[p[len(p)-1]], p)
			}
			languages[tag] = sw
		}
	}
}

// defaultLanguages are the languages whose defaults are read, by primary subtag. English "standard" is no
// default ("the standard library"); German "Standard-" in a compound nearly always is.
var defaultLanguages = map[string]shapeWords{
	"en": {words: setOf("default", "defaults", "defaulted", "defaulting", "omitted", "unspecified"),
		phrases: phrases("not specified", "not given")},
	"de": {prefixes: []string{"standard", "voreingestellt", "voreinstellung", "vorgabe"}},
	"fr": {phrases: phrases("par defaut")},
	"es": {prefixes: []string{"predeterminad"}, phrases: phrases("por defecto", "por omision")},
	"it": {prefixes: []string{"predefinit", "default"}},
	"pt": {prefixes: []string{"predefinid"}, phrases: phrases("por omissao", "por padrao", "valor padrao")},
	"ru": {phrases: phrases("по умолчанию")},
	"ja": {substrings: []string{"デフォルト", "既定", "初期値"}},
	"zh": {substrings: []string{"默认", "預設", "预设", "缺省"}},
}

// boundLanguages are the languages whose bounds are read, by primary subtag (words without accents).
var boundLanguages = map[string]shapeWords{
	"en": {words: setOf("maximum", "minimum", "max", "min", "limit", "limits", "limited", "unlimited", "exceed", "exceeds"),
		phrases: phrases("at least", "at most", "up to", "or more", "or fewer", "or less", "or newer", "or later",
			"no more than", "no less than", "more than", "less than", "fewer than", "greater than", "larger than")},
	"de": {words: setOf("max", "min", "hochstens", "mindestens", "limit", "grenze", "begrenzt", "unbegrenzt"),
		prefixes: []string{"maximal", "minimal", "maximum", "minimum", "hochst", "mindest", "uberschreit"},
		phrases:  phrases("bis zu", "mehr als", "weniger als")},
	"fr": {words: setOf("maximum", "minimum", "max", "min", "maximal", "maximale", "minimal", "minimale", "limite", "limites", "illimite"),
		phrases: phrases("au moins", "au plus", "plus de", "moins de")},
	"es": {words: setOf("maximo", "maxima", "minimo", "minima", "max", "min", "limite", "limites", "limitado", "ilimitado"),
		phrases: phrases("como maximo", "como minimo", "al menos", "mas de", "menos de")},
	"it": {words: setOf("massimo", "massima", "minimo", "minima", "max", "min", "limite", "limiti", "limitato", "illimitato", "almeno"),
		phrases: phrases("al massimo", "fino a", "piu di", "meno di")},
	"pt": {words: setOf("maximo", "maxima", "minimo", "minima", "max", "min", "limite", "limites", "limitado", "ilimitado"),
		phrases: phrases("no maximo", "no minimo", "pelo menos", "mais de", "menos de")},
	"ru": {prefixes: []string{"максимальн", "минимальн", "максимум", "минимум", "огранич", "лимит"},
		phrases: phrases("не более", "не менее", "не больше", "не меньше", "более", "менее")},
	// Not "以上" or "以下" ("or more", "or less"), which as often mean "the above" and "the following".
	"ja": {substrings: []string{"最大", "最小", "上限", "下限"}},
	"zh": {substrings: []string{"最大", "最小", "至少", "最多", "上限", "下限", "不超过"}},
}

// English words that ask for a bound without naming one.
var boundCues = setOf("shortest", "longest", "biggest", "largest", "smallest", "lowest", "highest")

// defaultCues are the phrases that ask what holds when nothing is set without naming a default, by language
// (words without accents; substrings for Japanese and Chinese).
var defaultCues = map[string]shapeWords{
	"en": {phrases: phrases("out of the box", "no arguments", "no argument", "without arguments", "without specifying",
		"without setting", "without passing", "left unset")},
	"de": {phrases: phrases("ohne angabe", "von haus aus", "ab werk")},
	"fr": {phrases: phrases("sans preciser", "sans rien preciser", "sans specifier")},
	"es": {phrases: phrases("sin especificar", "sin indicar", "de fabrica")},
	"it": {phrases: phrases("senza specificare", "senza indicare", "di fabbrica")},
	"pt": {phrases: phrases("sem especificar", "sem indicar", "de fabrica")},
	"ru": {phrases: phrases("из коробки", "без указания")},
	"ja": {substrings: []string{"指定しない", "指定しなかった", "何も設定しない"}},
	"zh": {substrings: []string{"不指定", "未指定", "开箱即用"}},
}

// unsetVerbs are the verbs of "if i don't <verb> ...", which asks for the default of what is not given.
var unsetVerbs = setOf("specify", "set", "pass", "give", "provide", "put", "change", "configure", "include", "add")

// asksDefault reports whether question, in the language lang, asks for a default: it names one ("default",
// "Standardwert", "par défaut") or asks what holds out of the box or unspecified ("ohne Angabe", "sans préciser",
// "指定しない"), or, in English, without an option ("without -m") or if the reader does not give a value.
func asksDefault(lang, question string) bool {
	if statesDefault(lang, question) || statesShape(defaultCues, lang, question) {
		return true
	}
	if b := textnorm.Base(lang); b != "" && b != "en" {
		return false
	}
	words := questionWords(question)
	for i, w := range words {
		if (w == "dont" || w == "don't" || w == "not" || w == "never") && i+1 < len(words) && unsetVerbs[words[i+1]] &&
			slices.Contains(words[max(0, i-3):i], "if") {
			return true
		}
		// "pg_ctl stop without -m": what holds when an option is left out.
		if (w == "without" || w == "w/o") && i+1 < len(words) && strings.HasPrefix(words[i+1], "-") {
			return true
		}
	}
	return false
}

// statesDefault reports whether text, in the language lang, names a default ("defaults to", "(default 7)",
// "standardmäßig", "par défaut", "デフォルト"). A language without a list reads as English.
func statesDefault(lang, text string) bool { return statesShape(defaultLanguages, lang, text) }

// asksBound reports whether question, in the language lang, asks for a bound: it names one ("max", "at least")
// or, in English, asks for the shortest, biggest, lowest ... of something.
func asksBound(lang, question string) bool {
	if statesBound(lang, question) {
		return true
	}
	if b := textnorm.Base(lang); b != "" && b != "en" {
		return false
	}
	return slices.ContainsFunc(questionWords(question), func(w string) bool { return boundCues[w] })
}

// statesBound reports whether text, in the language lang, states a bound ("at least 150 GB", "up to 32 columns",
// "a limit of two seats").
func statesBound(lang, text string) bool { return statesShape(boundLanguages, lang, text) }

// statesShape reports whether text, in the language lang, holds a word of the shape's list for lang (English's
// when lang has none). Words are read as whitespace separates them, so that a path ("/etc/default/keyboard") or
// an identifier ("default_transaction_isolation") names no default; it allocates only for a word with capitals
// or accents.
func statesShape(languages map[string]shapeWords, lang, text string) bool {
	sw := ofLanguage(languages, lang)
	for _, s := range sw.substrings {
		if strings.Contains(text, s) {
			return true
		}
	}
	if sw.words == nil && sw.prefixes == nil && sw.phrases == nil {
		return false
	}
	var last [maxPhraseWords]string // the words before this one, the latest last
	for field := range strings.FieldsSeq(text) {
		w := shapeWord(field)
		if sw.words[w] {
			return true
		}
		for _, p := range sw.prefixes {
			if strings.HasPrefix(w, p) {
				return true
			}
		}
		copy(last[:], last[1:])
		last[len(last)-1] = w
		for _, p := range sw.byLast[w] {
			if slices.Equal(last[len(last)-len(p):], p) {
				return true
			}
		}
	}
	return false
}

// maxPhraseWords bounds the words of a shape's phrase.
const maxPhraseWords = 4

// wordMarks are the punctuation and markdown around a word that shapeWord leaves out.
const wordMarks = "`*_.,;:!?\"'()[]{}¿¡«»"

// shapeWord is a whitespace-separated field of a text as statesShape reads it: without the punctuation and
// markdown around it (wordMarks), in lower case, without accents.
func shapeWord(field string) string {
	w := strings.Trim(field, wordMarks)
	for i := 0; i < len(w); i++ {
		if c := w[i]; c >= 'A' && c <= 'Z' || c >= 0x80 {
			return unaccent(strings.ToLower(w))
		}
	}
	return w
}

// ofLanguage is the entry of m, a table by primary language subtag, for the language lang: English's when m has
// none for it.
func ofLanguage[T any](m map[string]T, lang string) T {
	if v, ok := m[textnorm.Base(lang)]; ok {
		return v
	}
	return m["en"]
}

// Numbers and definitions. "How many units" is answered by a number beside the word it counts ("24 semester
// units"), "what is X" by a sentence whose subject is X and whose verb says what it is.

// askedTerm is the bit of the thing a "how many" or "how much" question counts ("units" in "how many units
// ..."), -1 for other questions.
func (q *passageQuery) askedTerm(question string) int {
	words := questionWords(question)
	for i := 0; i+2 < len(words); i++ {
		if words[i] == "how" && (words[i+1] == "many" || words[i+1] == "much") {
			for _, w := range words[i+2:] {
				if t := q.term([]byte(w)); t >= 0 && t < q.n {
					return t
				}
				if !textnorm.IsStopword(w) {
					return -1 // "how much is tuition": the word after is the subject, never a unit counted
				}
			}
		}
	}
	return -1
}

// numberBeside reports whether text states a number right before or after (one word away at most, stopwords
// aside) a word of term bit.
func (q *passageQuery) numberBeside(text string, bit int) bool {
	lastNumber, lastTerm, pos, found := -9, -9, 0, false
	q.buf = textnorm.AppendWords(q.buf, text, func(w []byte) bool {
		if textnorm.IsStopword(string(w)) {
			return true
		}
		switch {
		case statesNumber(w):
			found = pos-lastTerm <= 2
			lastNumber = pos
		case q.term(w) == bit:
			found = pos-lastNumber <= 2
			lastTerm = pos
		}
		pos++
		return !found
	})
	return found
}

// asksDefinition reports whether a question asks what something is: "what is X", "what's X", "what are X",
// "tell me about X", "explain X".
func asksDefinition(question string) bool {
	words := questionWords(question)
	if len(words) < 2 {
		return false
	}
	switch {
	case (words[0] == "what" && (words[1] == "is" || words[1] == "are")) || words[0] == "what's" || words[0] == "whats":
		return true
	case words[0] == "tell" && len(words) > 2 && words[2] == "about", words[0] == "explain", words[0] == "describe":
		return true
	}
	return false
}

// subjectDefined reports whether text says what the question's subject is: question words, then "is", "are" or
// "means" within the first evidenceSubjectWords words.
func (q *passageQuery) subjectDefined(text string) bool {
	pos, terms, found := 0, 0, false
	q.buf = textnorm.AppendWords(q.buf, text, func(w []byte) bool {
		switch s := string(w); {
		case s == "is" || s == "are" || s == "means" || s == "refers":
			found = terms > 0
			return false
		case q.term(w) >= 0 && q.term(w) < q.n:
			terms++
		}
		pos++
		return pos < evidenceSubjectWords
	})
	return found
}

// statesNumber reports whether a word states a number: it starts with a digit ("27", "1gb", "2016") or is a
// number word ("four"). A code with digits inside it ("w207", "cs61a") is a name, not a quantity.
func statesNumber(w []byte) bool {
	return len(w) > 0 && ('0' <= w[0] && w[0] <= '9' || numberWords[string(w)])
}
