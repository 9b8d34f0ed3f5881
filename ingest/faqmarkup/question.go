package faqmarkup

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Limits on what reads as a question.
const (
	// maxQuestionWords bounds a question that ends with a question mark: a longer "question" is a paragraph.
	maxQuestionWords = 50
	// maxBareQuestionWords bounds a question without a question mark, recognised by its first words.
	maxBareQuestionWords = 25
	// maxQuestionBytes bounds a question's length whatever its words.
	maxQuestionBytes = 400
)

// questionStart classifies the first word of a question without a question mark: a wh-word must be followed
// by an auxiliary ("How do ...", "What is ..."), an auxiliary by a subject ("Can I ...", "Is there ...").
// This is the one list of English question words; readsAsQuestion is its only reader.
func questionStart(w string) (wh, aux bool) {
	switch w {
	case "how", "what", "when", "where", "who", "which", "why":
		return true, false
	case "can", "do", "does", "is", "are", "will", "should", "may":
		return false, true
	}
	return false, false
}

// isAuxiliary reports whether w is a verb that follows a wh-word in a question.
func isAuxiliary(w string) bool {
	switch w {
	case "do", "does", "did", "is", "are", "was", "were", "am", "can", "could", "will", "would", "should",
		"shall", "may", "might", "must", "has", "have", "had":
		return true
	}
	return false
}

// isSubject reports whether w can open the subject of a question that starts with an auxiliary. It keeps out
// headings such as "May 2024 releases" or "Do not reply".
func isSubject(w string) bool {
	switch w {
	case "i", "we", "you", "my", "our", "your", "the", "a", "an", "it", "they", "their", "there", "this", "that",
		"these", "those", "he", "she", "someone", "anyone", "anybody", "somebody", "one":
		return true
	}
	return false
}

// hasContentWord reports whether a question has a word besides question words, auxiliaries and pointers:
// "What's this?" and "What does that mean?" ask about something the page shows, and read as nothing on their
// own. Persons count as content: "Where are you?" asks something of the site.
func hasContentWord(words []string) bool {
	for _, w := range words {
		w = strings.ToLower(strings.TrimFunc(w, isEdgePunct))
		if w == "" || whContraction(w) || isAuxiliary(w) {
			continue
		}
		if wh, _ := questionStart(w); wh {
			continue
		}
		switch strings.ReplaceAll(w, "’", "'") {
		case "this", "that", "these", "those", "it", "there", "here", "the", "a", "an", "mean", "means", "so",
			"about", "else", "not", "that's", "it's", "there's":
			continue
		}
		return true
	}
	return false
}

// whContraction reports whether w is a wh-word joined to "is" or "has" ("what's", "how’s").
func whContraction(w string) bool {
	w = strings.ReplaceAll(w, "’", "'")
	base, ok := strings.CutSuffix(w, "'s")
	if !ok {
		return false
	}
	wh, _ := questionStart(base)
	return wh
}

// endsWithQuestionMark reports whether s ends with a question mark: ASCII, full-width (U+FF1F) or Arabic
// (U+061F), possibly inside closing quotes or brackets.
func endsWithQuestionMark(s string) bool {
	s = strings.TrimRightFunc(s, func(r rune) bool {
		return unicode.IsSpace(r) || strings.ContainsRune(`"')]”’»`, r)
	})
	r, _ := utf8.DecodeLastRuneInString(s)
	return r == '?' || r == '？' || r == '؟'
}

// readsAsQuestion reports whether q, a cleaned question text, reads as a question: it ends with a question
// mark and has 2 to maxQuestionWords words (or is one run of at least 5 non-ASCII characters), or it has 3
// to maxBareQuestionWords words and opens like an English question. It is deliberately strict: an entry
// found here may answer a visitor without a model.
func readsAsQuestion(q string) bool {
	if len(q) > maxQuestionBytes {
		return false
	}
	words := strings.Fields(q)
	if !hasContentWord(words) {
		return false
	}
	if endsWithQuestionMark(q) {
		// Scripts written without spaces (Chinese, Japanese) put a whole question in one "word".
		unspaced := len(words) == 1 && utf8.RuneCountInString(words[0]) >= 5 && !isASCII(words[0])
		return (len(words) >= 2 || unspaced) && len(words) <= maxQuestionWords
	}
	if len(words) < 3 || len(words) > maxBareQuestionWords {
		return false
	}
	first := strings.ToLower(strings.TrimFunc(words[0], isEdgePunct))
	second := strings.ToLower(strings.TrimFunc(words[1], isEdgePunct))
	if whContraction(first) {
		return true
	}
	switch wh, aux := questionStart(first); {
	case wh:
		return isAuxiliary(second)
	case aux:
		return isSubject(second)
	}
	return false
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func isEdgePunct(r rune) bool { return unicode.IsPunct(r) && r != '\'' && r != '’' }

// questionPrefix matches the labels FAQs put before a question: "Q:", "Q1.", "Question 3 -", "1.", "2)".
// Apart from a colon, the label is followed by a space, so "Q-tips?" and "3.5 mm jacks?" keep their start.
var questionPrefix = regexp.MustCompile(`^(?i:q(?:uestion)?\s*\d{0,3}\s*:\s*|q(?:uestion)?\s*\d{0,3}\s*[.)]\s+|` +
	`q(?:uestion)?\s*\d{0,3}\s+[\-–—]\s+|\d{1,3}\s*[.)]\s+)`)

// answerPrefix matches the label of an answer: "A:", "A.", "Answer:".
var answerPrefix = regexp.MustCompile(`^(?i:(?:a|answer)\s*[:.\-–—]\s+|answer:)`)

// permalink holds the characters of heading permalinks that page generators append ("¶", "§", "#", "🔗").
const permalink = "¶§#🔗"

// cleanQuestion trims a question's text of surrounding space, permalink characters and its label.
func cleanQuestion(s string) string {
	s = strings.TrimSpace(s)
	s = strings.TrimRightFunc(s, func(r rune) bool { return unicode.IsSpace(r) || strings.ContainsRune(permalink, r) })
	s = strings.TrimLeftFunc(s, func(r rune) bool { return unicode.IsSpace(r) || strings.ContainsRune(permalink, r) })
	return strings.TrimSpace(questionPrefix.ReplaceAllString(s, ""))
}

// cleanAnswer trims an answer's text and drops its "A:" label.
func cleanAnswer(s string) string {
	return strings.TrimSpace(answerPrefix.ReplaceAllString(strings.TrimSpace(s), ""))
}

// questionKey is the form under which questions are deduplicated: lower case, letters and digits only, words
// separated by one space. "How do I apply?" and "how do I apply" share a key.
func questionKey(q string) string {
	var b strings.Builder
	space := false
	for _, r := range strings.ToLower(q) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			space = false
			b.WriteRune(r)
		} else {
			space = true
		}
	}
	return b.String()
}

// faqTitle matches a heading, title or label that announces questions and answers.
var faqTitle = regexp.MustCompile(`(?i)\bfaqs?\b|\bfrequently[\s-]+asked\b|\bcommon(?:ly asked)? questions\b|` +
	`\bquestions\s+(?:and|&)\s+answers\b|\bq\s*(?:&|and)\s*a\b`)

// isFAQTitle reports whether s announces a section of questions and answers ("FAQ", "Frequently asked
// questions", "Q&A").
func isFAQTitle(s string) bool { return faqTitle.MatchString(s) }

// hasFAQToken reports whether a URL path has a segment word "faq" or "faqs" ("/help/faq/", "/mail-faq.html").
func hasFAQToken(path string) bool {
	for _, w := range strings.FieldsFunc(strings.ToLower(path), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		if w == "faq" || w == "faqs" {
			return true
		}
	}
	return false
}

// cutAnswer shortens s to at most max bytes, at the end of the last sentence or line that fits when there is
// one in the second half of the allowance, else at a word boundary with an ellipsis.
func cutAnswer(s string, max int) string {
	if len(s) <= max {
		return s
	}
	n := max
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	cut := s[:n]
	best := -1
	for i := 0; i < len(cut); i++ {
		switch cut[i] {
		case '.', '!', '?':
			if i+1 == len(cut) || cut[i+1] == ' ' || cut[i+1] == '\n' {
				best = i + 1
			}
		case '\n':
			best = i
		}
	}
	if best >= max/2 {
		return strings.TrimSpace(cut[:best])
	}
	if i := strings.LastIndexAny(cut, " \n"); i > 0 {
		cut = cut[:i]
	}
	return strings.TrimSpace(cut) + "…"
}
