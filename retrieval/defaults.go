package retrieval

import (
	"slices"
	"strings"

	"github.com/ragproxy/ragproxy/textnorm"
)

// Defaults. Documentation answers "what happens if I set nothing" with a default ("The default value is four
// megabytes", "decimal places (default 7)", "Directories are made available as read-only by default"), and
// visitors ask it in other words as well: "out of the box", "if i dont specify rw or ro", "with no arguments". A
// question that asks for a default is answered first by a unit that states one. (Of the 336 questions of the ten
// English dev and held-out sets, 31 ask for one.)

// defaultWords is how a language writes "default": words that start with one of prefixes (read without accents,
// lower case: German "Standardwert", "standardmäßig"), or phrases (French "par défaut"), or, in a language
// written without spaces, substrings.
type defaultWords struct {
	words      map[string]bool
	prefixes   []string
	phrases    [][]string
	substrings []string
}

// defaultLanguages are the languages whose defaults are read, by primary subtag. English "standard" is no
// default ("the standard library"); German "Standard-" in a compound nearly always is.
var defaultLanguages = map[string]defaultWords{
	"en": {words: setOf("default", "defaults", "defaulted", "defaulting", "omitted", "unspecified"),
		phrases: phrases("not specified", "not given")},
	"de": {prefixes: []string{"standard", "voreingestellt", "voreinstellung", "vorgabe"}},
	"fr": {phrases: phrases("par defaut", "valeur defaut")},
	"es": {prefixes: []string{"predeterminad"}, phrases: phrases("por defecto", "por omision")},
	"it": {prefixes: []string{"predefinit", "default"}},
	"pt": {prefixes: []string{"predefinid"}, phrases: phrases("por omissao", "por padrao", "valor padrao")},
	"ru": {phrases: phrases("по умолчанию")},
	"ja": {substrings: []string{"デフォルト", "既定", "初期値"}},
	"zh": {substrings: []string{"默认", "預設", "预设", "缺省"}},
}

// English phrases that ask what holds when nothing is set, without naming a default.
var defaultCues = phrases("out of the box", "no arguments", "no argument", "without arguments", "without specifying",
	"without setting", "without passing", "left unset")

// unsetVerbs are the verbs of "if i don't <verb> ...", which asks for the default of what is not given.
var unsetVerbs = setOf("specify", "set", "pass", "give", "provide", "put", "change", "configure", "include", "add")

// asksDefault reports whether question, in the language lang, asks for a default: it names one ("default",
// "Standardwert", "par défaut"), or, in English, asks what holds out of the box, without an argument, or if the
// reader does not give a value.
func asksDefault(lang, question string) bool {
	if statesDefault(lang, question) {
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
	}
	return slices.ContainsFunc(defaultCues, func(p []string) bool { return containsPhrase(words, p) })
}

// statesDefault reports whether text, in the language lang, names a default ("defaults to", "(default 7)",
// "standardmäßig", "par défaut", "デフォルト"). A language without a list reads as English.
func statesDefault(lang, text string) bool {
	dw, ok := defaultLanguages[textnorm.Base(lang)]
	if !ok {
		dw = defaultLanguages["en"]
	}
	for _, s := range dw.substrings {
		if strings.Contains(text, s) {
			return true
		}
	}
	if dw.words == nil && dw.prefixes == nil && dw.phrases == nil {
		return false
	}
	// Words as whitespace separates them, so that a path ("/etc/default/keyboard") or an identifier
	// ("default_transaction_isolation") names no default.
	words := strings.Fields(strings.ToLower(text))
	for i, w := range words {
		words[i] = unaccent(strings.Trim(w, "`*_.,;:!?\"'()[]{}¿¡«»"))
	}
	for _, w := range words {
		if dw.words[w] {
			return true
		}
		for _, p := range dw.prefixes {
			if strings.HasPrefix(w, p) {
				return true
			}
		}
	}
	return slices.ContainsFunc(dw.phrases, func(p []string) bool { return containsPhrase(words, p) })
}

// containsPhrase reports whether words hold phrase's words in a row.
func containsPhrase(words, phrase []string) bool {
	for i := 0; i+len(phrase) <= len(words); i++ {
		if slices.Equal(words[i:i+len(phrase)], phrase) {
			return true
		}
	}
	return false
}
