package retrieval

import (
	"github.com/ragproxy/ragproxy/retrieval/wordnet"
	"github.com/ragproxy/ragproxy/textnorm"
)

// questionShapes maps question words to the words pages write for what they ask: a date for "when", a location
// for "where". WordNet describes content words and has no entry for these, so they are kept as a table.
var questionShapes = map[string][]string{
	"when":  {"date", "dates"},
	"where": {"location", "located"},
}

// Which WordNet senses expansion trusts, and which synonyms it adds (eval on both dev sets; looser choices add
// more noise than matches):
const (
	// minSenseShare: a sense is trusted when it was tagged at least this share as often as the word's most
	// frequent sense in WordNet's tagged texts, every part of speech together; never-tagged words are not
	// expanded. 1 keeps the most frequent sense alone (0.25 also let in "eject" for "release").
	minSenseShare = 1.0
	// maxSenses is the most senses of one part of speech a word may have and still be expanded: light verbs such
	// as "get", "make", "keep" and "set" have dozens, and their synonyms rarely say what a question means.
	maxSenses = 20
	// sitePreference: a synonym is added only when the site uses it (in chunks containing it) at least this many
	// times as often as the question's own word: where the site plainly has another word for the thing ("need"
	// on a site that writes "required"). With 1 or 3, synonyms of words the site itself uses often ("begin" for
	// "start") cost more questions than they found.
	sitePreference = 10.0
)

// synonyms returns the words the site uses for q's words, in order, without repeats and without words q
// already has: the question-shape words, and WordNet synonyms of q's words and two-word phrases ("in charge")
// sharing a trusted sense of both words (see the constants). No word that WordNet gives as an antonym of one of
// q's words is added ("begins" never brings "ends"). df tells how often the site uses a word (any inflection);
// db nil leaves WordNet out.
func synonyms(q string, db *wordnet.DB, df func(w string) int) (shapes, fromWordNet []string) {
	words := questionWords(q)
	have := map[string]bool{} // stems of q's words and of the words added
	forbidden := map[string]bool{}
	for _, w := range words {
		have[textnorm.Stem(w)] = true
		if db != nil {
			for _, a := range db.Antonyms(w) {
				forbidden[textnorm.Stem(a)] = true
			}
		}
	}
	add := func(out *[]string, s string, floor float64) {
		st := textnorm.Stem(s)
		if have[st] || forbidden[st] || textnorm.IsStopword(s) || df(s) == 0 || float64(df(s)) < floor {
			return
		}
		have[st] = true
		*out = append(*out, s)
	}
	expand := func(w string) {
		floor := sitePreference * float64(df(w))
		for _, sense := range trustedSenses(db, w) {
			for _, s := range sense.Words {
				if s != sense.Lemma && isWord(s) && !hasDigit(s) && trusts(db, s, sense.Synset) {
					add(&fromWordNet, s, floor)
				}
			}
		}
	}
	for i, w := range words {
		for _, s := range questionShapes[w] {
			add(&shapes, s, 0)
		}
		if db == nil || w == "" {
			continue
		}
		if i+1 < len(words) && words[i+1] != "" {
			expand(w + " " + words[i+1])
		}
		if !textnorm.IsStopword(w) && !hasDigit(w) {
			expand(w)
		}
	}
	return shapes, fromWordNet
}

// trustedSenses returns the senses of w expansion may use (see minSenseShare and maxSenses).
func trustedSenses(db *wordnet.DB, w string) []wordnet.Sense {
	senses := db.Senses(w)
	top := 0
	perPOS := map[wordnet.POS]int{}
	for _, s := range senses {
		top = max(top, s.Count)
		perPOS[s.POS]++
	}
	for _, n := range perPOS {
		if n > maxSenses {
			return nil
		}
	}
	var out []wordnet.Sense
	for _, s := range senses {
		if top > 0 && float64(s.Count) >= minSenseShare*float64(top) {
			out = append(out, s)
		}
	}
	return out
}

// trusts reports whether synset is one of w's trusted senses: a synonym must mean the shared sense usually,
// not only in a rare reading of its own.
func trusts(db *wordnet.DB, w string, synset int) bool {
	for _, s := range trustedSenses(db, w) {
		if s.Synset == synset {
			return true
		}
	}
	return false
}

// isWord reports whether s is a single word as textnorm splits text (not a collocation such as "set about",
// nor a hyphenated "get-go").
func isWord(s string) bool {
	n := 0
	textnorm.Words(s, func(string) bool { n++; return n < 2 })
	return n == 1
}
