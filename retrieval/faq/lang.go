package faq

import (
	"slices"

	"github.com/ragproxy/ragproxy/textnorm"
)

// entryLanguage is the analysis entry e is read in (nil: English): its Lang's, else that of the language its
// question and answer are surely written in (detect), else English.
func entryLanguage(e *Entry) *textnorm.Language {
	if e.Lang != "" {
		return textnorm.LanguageOf(e.Lang)
	}
	if lang, ok := detect(e); ok {
		return textnorm.LanguageOf(lang)
	}
	return nil
}

// detect is the language e's question and answer are surely written in, among those analysed here
// (textnorm.DetectAmongMany).
func detect(e *Entry) (string, bool) {
	return textnorm.DetectAmongMany(e.Question+"\n"+e.Answer, textnorm.Analysed())
}

// WithLanguage returns entries with the Lang of each that has none set: the language its question and answer are
// surely written in, else lang (a site's main language, for the entries an operator writes for it: "Parken?" and
// "Parkplatz B." say too little to tell, and a German site's are German). entries is not changed.
func WithLanguage(entries []Entry, lang string) []Entry {
	out := slices.Clone(entries)
	for i := range out {
		if out[i].Lang != "" {
			continue
		}
		if l, ok := detect(&out[i]); ok {
			out[i].Lang = l
		} else {
			out[i].Lang = lang
		}
	}
	return out
}

// tag is l's primary subtag, "en" for English (nil).
func tag(l *textnorm.Language) string {
	if l == nil {
		return "en"
	}
	return l.Tag()
}

// questionWords tell apart what an English question asks; stopword lists drop them.
var questionWords = map[string]bool{"when": true, "where": true, "who": true, "whom": true, "why": true,
	"much": true, "many": true, "not": true, "no": true}

// questionWordsIn are, for other languages, the words of the kind questionWords keeps that their Snowball
// stopword lists hold, as Normalize writes them (the others, German "wann" and French "où", are terms anyway);
// a test holds each to its list.
var questionWordsIn = map[string]map[string]bool{
	"de": set("wo", "viel", "nicht", "kein", "keine"),
	"fr": set("qui", "ne", "pas"),
	"es": set("cuando", "donde", "quien", "mucho", "muchos", "no"),
	"it": set("dove", "chi", "perché", "quanto", "quanti", "quante", "non"),
	"pt": set("quando", "quem", "não"),
	"nl": set("niet", "geen"),
	"sv": set("när", "vem", "varför", "inte", "ingen"),
	"ru": set("когда", "где", "кто", "не", "нет"),
}

// kanaQuestionWords are the Japanese question words written in two or three hiragana, which CJK bigrams leave
// out (a bigram of two hiragana is a particle or an ending far more often than not): when, where, who, why, how
// much, how many.
var kanaQuestionWords = map[string]map[string]bool{
	"ja": set("いつ", "どこ", "だれ", "なぜ", "いくら", "いくつ"),
}

func set(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

// known reports whether term is a term of the entries' questions.
func (m *Matcher) known(term string) bool { return m.vocabulary[term] }

// compoundParts are the terms of word w's parts, when l writes compounds, w's own term is not one known holds
// and known holds each of its parts (textnorm.Language.Decompound); else nil.
func compoundParts(w string, l *textnorm.Language, known func(term string) bool) []string {
	if known == nil || !l.Compounds() || known(l.Stem(w)) {
		return nil
	}
	parts := l.Decompound(w, textnorm.Options{}, known)
	if len(parts) < 2 {
		return nil
	}
	for _, p := range parts {
		if !known(p) {
			return nil
		}
	}
	return parts
}
