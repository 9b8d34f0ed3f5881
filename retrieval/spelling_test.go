package retrieval

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/ragproxy/ragproxy/index"
)

func TestSpellings(t *testing.T) {
	texts := []string{
		"Undergraduate Adviser: Kathy. The centre for enrolment, see the catalogue.",
		"An advisor signs. Forms are filed with the organization. Programme fees, filled in by hand, were cancelled.",
	}
	ix := &index.Index{}
	for i, text := range texts {
		ix.Pages = append(ix.Pages, index.Page{ID: i, Title: "Page", Markdown: text})
		ix.Chunks = append(ix.Chunks, index.Chunk{PageID: i, Text: text})
	}
	lx, err := newLexicon(ix)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		word string
		want []string
	}{
		{"advisor", []string{"adviser"}},
		{"center", []string{"centre"}},
		{"enrollment", []string{"enrolment"}},
		{"catalog", []string{"catalogue"}},
		{"organisation", []string{"organization"}},
		{"program", []string{"programme"}},
		{"canceled", []string{"cancelled"}},
		{"adviser", []string{"advisor"}}, // the site uses both
		{"filled", nil},                  // "filed" is another word
		{"hour", nil},                    // too short to swap an ending
		{"theater", nil},                 // the site writes it neither way
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, lx.spellings(tt.word)); diff != "" {
			t.Errorf("spellings(%q) (-want +got):\n%s", tt.word, diff)
		}
	}
	// The passage coverage of a question counts the site's other spelling as the question's word, also where the
	// site uses the question's spelling too (so no correction applies).
	q := newPassageQuery("who is the undergrad advisor", lx.forms)
	if _, got := q.coverage("Undergraduate Adviser: Kathy"); got != 0.5 { // undergrad, advisor: "undergrad" is not completed here
		t.Errorf("coverage = %v, want 0.5", got)
	}
}
