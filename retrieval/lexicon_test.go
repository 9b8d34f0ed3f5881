package retrieval

import (
	"testing"

	"github.com/ragproxy/ragproxy/index"
)

func TestLexiconAcronyms(t *testing.T) {
	ix := &index.Index{Pages: []index.Page{
		{Title: "Sustainability", Markdown: "The minor in Corporate Sustainability (CS) is new."},
		{Title: "Computing", Markdown: "# Computer Science (CS)\n\nThe Computer Science (CS) major."},
		{Title: "Letters", Markdown: "The College of Letters & Science (L&S) advises students."},
	}}
	lx := newLexicon(ix)
	for acr, want := range map[string]string{"cs": "Computer Science", "l&s": "Letters & Science"} {
		if got := lx.acronyms[acr]; got != want {
			t.Errorf("acronym %q = %q, want %q", acr, got, want)
		}
	}
}

func TestMostCommon(t *testing.T) {
	tests := []struct {
		in   []string
		want string
	}{
		{[]string{"A B", "c d", "C D"}, "c d"},
		{[]string{"A B", "C D"}, "A B"},
		{[]string{"Only One"}, "Only One"},
	}
	for _, tt := range tests {
		if got := mostCommon(tt.in); got != tt.want {
			t.Errorf("mostCommon(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
