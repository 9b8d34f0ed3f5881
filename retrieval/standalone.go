package retrieval

import (
	"slices"

	"github.com/ragproxy/ragproxy/textnorm"
)

// StandsAlone reports whether the latest user message of msgs can be retrieved for as it is written: it is the
// conversation's first user turn, and it refers to nothing outside itself (no pronoun or demonstrative that an
// earlier turn would resolve, no ellipsis such as "and for grad students?" or "what about fall?") and is not
// chit-chat (a greeting or thanks, which needs no retrieval at all). For such a message a model's analysis has
// nothing to resolve, so a caller may retrieve from the heuristic analysis at once instead of waiting for it.
func (Heuristic) StandsAlone(msgs []Message) bool {
	q, prev := lastUserTurns(msgs)
	if q == "" || prev != "" {
		return false
	}
	if continues(q) || refers(q) {
		return false
	}
	content := 0
	for _, w := range questionWords(q) {
		if w != "" && !textnorm.IsStopword(w) && !chitchat[w] {
			content++
		}
	}
	return content > 0
}

// Chitchat reports whether the latest user message is only a greeting, thanks or acknowledgement ("thanks!",
// "hi there", "ok great"), which no page of a site answers.
func (Heuristic) Chitchat(msgs []Message) bool {
	q, _ := lastUserTurns(msgs)
	if q == "" {
		return false
	}
	for _, w := range questionWords(q) {
		if w != "" && !chitchat[w] {
			return false
		}
	}
	return true
}

// referring are words that stand for something the message does not name: pronouns and demonstratives whose
// referent an earlier turn (or nothing) supplies.
var referring = setOf("it", "its", "it's", "itself", "they", "them", "their", "theirs", "this", "that", "these",
	"those", "he", "him", "his", "she", "her", "hers", "ones", "same", "former", "latter", "above",
	"previous", "aforementioned")

// refers reports whether message q holds a word that stands for something it does not name ("what are its
// opening hours?", "how much does it cost?"): a pronoun or demonstrative whose referent an earlier turn supplies.
func refers(q string) bool {
	return slices.ContainsFunc(questionWords(q), func(w string) bool { return referring[w] })
}

// refersBriefly reports whether message q refers to something it does not name (refers) and says little more:
// at most three words that are not stopwords ("what is its phone number?", "where is his office?"). A longer
// question with a pronoun names its subject itself ("how much extra does it cost to live in bowles hall?"), and
// read joined to an unrelated question before it, it lost its page: on the dev and held-out questions of four
// sites that hold a pronoun, each after another question of its site, MRR fell from 0.76-0.83 to 0.46-0.63 when
// every such question was joined; with the bound, none of them is, and every follow-up of the follow-up sets is.
func refersBriefly(q string) bool {
	if !refers(q) {
		return false
	}
	content := 0
	for _, w := range questionWords(q) {
		if w != "" && !textnorm.IsStopword(w) {
			content++
		}
	}
	return content <= briefReference
}

// briefReference is the most words, stopwords aside, of a message that refersBriefly reads as a follow-up.
const briefReference = 3

// continues reports whether message q opens as the continuation of another ("and for grad students?", "what
// about fall?"): an ellipsis, whose subject the message before it names.
func continues(q string) bool {
	words := questionWords(q)
	return len(words) > 0 && ellipsisOpeners[words[0]] || len(words) > 1 && ellipsisOpeners[words[0]+" "+words[1]]
}

// ellipsisOpeners open a message that continues another: "and for grad students?", "what about fall?"; and in
// the other languages ragproxy answers in, their "and" and "or" ("und für Masterstudierende?", "et pour
// l'automne ?", "¿y los sábados?"). Not Italian's and Portuguese's "e": visitors type it for "è" ("e possibile
// …?", is it possible), which opens a question of its own.
var ellipsisOpeners = setOf("and", "or", "also", "but", "so", "then", "what about", "how about", "same for",
	"more", "else", "und", "oder", "et", "ou", "y")

// chitchat are the words of greetings, thanks and acknowledgements.
var chitchat = setOf("hi", "hello", "hey", "hiya", "yo", "thanks", "thank", "you", "thx", "ty", "cheers", "bye",
	"goodbye", "ok", "okay", "great", "cool", "nice", "good", "morning", "afternoon", "evening", "there", "much",
	"so", "very", "lot", "a", "awesome", "perfect", "got", "it", "sure", "yes", "no", "please")
