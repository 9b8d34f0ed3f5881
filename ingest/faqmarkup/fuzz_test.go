package faqmarkup

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzExtract checks that no page makes Extract panic or fail (but for the parser's refusal of deep nesting),
// and that every entry it returns has a question and an answer, one line of question under the length bound,
// a known source, the page's URL, and an answer taken after a heading within its bound.
func FuzzExtract(f *testing.F) {
	for _, tt := range allExtractTests() {
		f.Add(tt.html)
	}
	for _, s := range []string{
		"", "<", "<details><summary>", "<dl><dt>Why not?</dt><dd>", "\xff\xfe<h2>FAQ</h2><h3>Is it?\xc3</h3>",
		`<script type="application/ld+json">[[[[[[[[[[[[[[[[[[[[{"@type":"FAQPage"}]]]]]]]]]]]]]]]]]]]]</script>`,
		`<title>FAQ</title><h2>Is it nested?</h2><div><div><h3>Deeper?</h3><p>Yes.</p></div></div><hr><p>x</p>`,
		strings.Repeat("<details><summary>Is it deep?</summary>x ", 600),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, page string) {
		entries, err := Extract([]byte(page), "https://example.org/faq/")
		if err != nil {
			// The parser refuses documents nested too deep; nothing else may fail.
			if !strings.HasPrefix(err.Error(), "faq: parse html: ") || entries != nil {
				t.Fatalf("Extract: %v", err)
			}
			return
		}
		checkEntries(t, entries)
		for _, e := range entries {
			if strings.ContainsAny(e.Question, "\n\r") || len(e.Question) > maxQuestionBytes {
				t.Errorf("question %q is not one line within %d bytes", e.Question, maxQuestionBytes)
			}
			if e.Source == SourceHeading && len(e.Answer) > MaxHeadingAnswer+len("…") {
				t.Errorf("heading answer of %d bytes", len(e.Answer))
			}
			if utf8.ValidString(page) && (!utf8.ValidString(e.Question) || !utf8.ValidString(e.Answer)) {
				t.Errorf("invalid UTF-8 from a valid page: %+v", e)
			}
			if !strings.HasPrefix(e.URL, "https://example.org/faq/") {
				t.Errorf("entry URL %q is not the page's", e.URL)
			}
		}
	})
}
