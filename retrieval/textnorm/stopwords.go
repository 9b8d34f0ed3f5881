package textnorm

// IsStopword reports whether w is an English function word that carries no retrieval signal. The list is the
// classic SMART/Lucene core without the words that matter in questions about rules and requirements ("not",
// "no", "after", "before", "more", "most", "only", "same" are kept), plus the words of conversation that people
// put around a question ("got a bounce saying ..., what does that mean", "can u tell me", "how fast will they
// get back to us"): pages seldom state a fact with them, yet a page that happens to (an FAQ heading "My issue
// got closed") matched the question on them, often on its rarest words.
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
	// conversation
	"actually": {}, "get": {}, "gets": {}, "getting": {}, "got": {}, "hey": {}, "hi": {}, "know": {},
	"mean": {}, "means": {}, "please": {}, "really": {}, "said": {}, "say": {}, "saying": {}, "says": {},
	"tell": {}, "thanks": {}, "u": {}, "ur": {}, "want": {}, "wants": {},
}
