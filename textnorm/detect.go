package textnorm

import (
	"slices"
	"unicode"

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
func Detect(text string, among []string) (lang string, ok bool) {
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
	letters := 0
	for _, r := range text {
		if unicode.IsLetter(r) {
			letters++
		}
	}
	if letters < MinChoiceLetters || among == nil && letters < MinDetectLetters {
		return "", false
	}
	opt := whatlanggo.Options{}
	if among != nil {
		opt.Whitelist = map[whatlanggo.Lang]bool{}
		for _, code := range among {
			if l, ok := whatlangByCode[code]; ok {
				opt.Whitelist[l] = true
			}
		}
		if len(opt.Whitelist) == 0 {
			return "", false
		}
	}
	info := whatlanggo.DetectWithOptions(text, opt)
	code := info.Lang.Iso6391()
	if code == "" || among == nil && !info.IsReliable() && letters < 4*MinDetectLetters {
		return "", false
	}
	return code, true
}

// whatlangByCode maps ISO 639-1 codes to the detector's languages.
var whatlangByCode = func() map[string]whatlanggo.Lang {
	m := map[string]whatlanggo.Lang{}
	for l := whatlanggo.Lang(0); l <= whatlanggo.Zul; l++ {
		if code := l.Iso6391(); code != "" {
			m[code] = l
		}
	}
	m["zh"] = whatlanggo.Cmn
	return m
}()

// Name is the English name of the language tag names ("German" for "de-CH"), as the detector names its
// languages, or "" for a language it does not know. Chinese and Norwegian are named as such rather than by the
// detector's narrower Mandarin and Bokmål.
func Name(tag string) string {
	switch b := Base(tag); b {
	case "zh":
		return "Chinese"
	case "no", "nb":
		return "Norwegian"
	default:
		if l, ok := whatlangByCode[b]; ok {
			return l.String()
		}
	}
	return ""
}
