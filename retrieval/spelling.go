package retrieval

import (
	"slices"
	"strings"
)

// spellingPairs are word endings that English spells two ways, British and American, or as two accepted forms of
// one word: "adviser" and "advisor", "enrolment" and "enrollment", "centre" and "center", "programme" and
// "program", "catalogue" and "catalog", "licence" and "license", "organisation" and "organization". A site uses
// one (or both), a visitor types the other. Only endings whose swap makes another spelling of the same word are
// listed: swapping "lled" and "led" would turn "filled" into "filed", so the doubled l is swapped only after an
// e ("cancelled", "labelled", "counsellor").
var spellingPairs = [][2]string{
	{"isor", "iser"}, {"isors", "isers"},
	{"ise", "ize"}, {"ised", "ized"}, {"ises", "izes"}, {"ising", "izing"},
	{"isation", "ization"}, {"isations", "izations"},
	{"yse", "yze"}, {"ysed", "yzed"}, {"yses", "yzes"}, {"ysing", "yzing"},
	{"our", "or"}, {"ours", "ors"}, {"oured", "ored"}, {"ouring", "oring"}, {"ourable", "orable"},
	{"tre", "ter"}, {"tres", "ters"},
	{"logue", "log"}, {"logues", "logs"},
	{"ence", "ense"}, {"ences", "enses"},
	{"elled", "eled"}, {"elling", "eling"}, {"ellor", "elor"}, {"ellors", "elors"},
	{"olment", "ollment"}, {"olments", "ollments"}, {"ilment", "illment"},
	{"rol", "roll"}, {"rols", "rolls"}, {"fil", "fill"}, {"fils", "fills"},
	{"gramme", "gram"}, {"grammes", "grams"},
	{"gement", "gment"}, {"gements", "gments"},
	{"ageing", "aging"},
}

// minSpellingLen is the shortest word whose ending is swapped: short words ("hour", "four", "ice") end alike by
// chance.
const minSpellingLen = 6

// spellings returns the other spellings of w (spellingPairs) that the site uses, or nil.
func (lx *lexicon) spellings(w string) []string {
	if len(w) < minSpellingLen {
		return nil
	}
	var out []string
	try := func(from, to string) {
		if stem, ok := strings.CutSuffix(w, from); ok && len(stem) >= 2 {
			if v := stem + to; lx.df[v] > 0 && !slices.Contains(out, v) {
				out = append(out, v)
			}
		}
	}
	for _, p := range spellingPairs {
		try(p[0], p[1])
		try(p[1], p[0])
	}
	return out
}
