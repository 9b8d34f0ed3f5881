package textnorm

// IsStopword reports whether w is an English function word that carries no retrieval signal. The list is the
// classic SMART/Lucene core without the words that matter in questions about rules and requirements ("not",
// "no", "after", "before", "more", "most", "only", "same" are kept).
func IsStopword(w string) bool {
	_, ok := stopwords[w]
	return ok
}

var stopwords = map[string]struct{}{
	"a": {}, "about": {}, "am": {}, "an": {}, "and": {}, "any": {}, "are": {}, "as": {}, "at": {}, "be": {},
	"been": {}, "being": {}, "but": {}, "by": {}, "can": {}, "could": {}, "did": {}, "do": {}, "does": {},
	"doing": {}, "for": {}, "from": {}, "had": {}, "has": {}, "have": {}, "having": {}, "he": {}, "her": {},
	"here": {}, "hers": {}, "him": {}, "his": {}, "how": {}, "i": {}, "if": {}, "in": {}, "into": {}, "is": {},
	"it": {}, "its": {}, "itself": {}, "just": {}, "me": {}, "my": {}, "of": {}, "on": {}, "or": {},
	"our": {}, "ours": {}, "she": {}, "should": {}, "so": {}, "some": {}, "such": {}, "than": {}, "that": {},
	"the": {}, "their": {}, "theirs": {}, "them": {}, "then": {}, "there": {}, "these": {}, "they": {},
	"this": {}, "those": {}, "to": {}, "too": {}, "us": {}, "very": {}, "was": {}, "we": {}, "were": {},
	"what": {}, "when": {}, "where": {}, "which": {}, "while": {}, "who": {}, "whom": {}, "why": {}, "will": {},
	"with": {}, "would": {}, "you": {}, "your": {}, "yours": {}, "im": {}, "whats": {},
}
