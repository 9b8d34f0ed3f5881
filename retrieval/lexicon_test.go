package retrieval

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/ragproxy/ragproxy/index"
)

func TestLexiconAcronyms(t *testing.T) {
	ix := &index.Index{Pages: []index.Page{
		{Title: "Sustainability", Markdown: "The minor in Corporate Sustainability (CS) is new."},
		{Title: "Computing", Markdown: "# Computer Science (CS)\n\nThe Computer Science (CS) major."},
		{Title: "Letters", Markdown: "The College of Letters & Science (L&S) advises students."},
	}}
	lx, err := newLexicon(ix)
	if err != nil {
		t.Fatal(err)
	}
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

func TestSplitCode(t *testing.T) {
	tests := map[string][]string{
		"cs61b":   {"cs", "61b"},
		"math1a":  {"math", "1a"},
		"econ133": {"econ", "133"},
		"61b":     nil, // no letters before the number
		"c3":      nil, // one letter is not a code
		"3.70":    nil,
	}
	for in, want := range tests {
		if diff := cmp.Diff(want, splitCode(in)); diff != "" {
			t.Errorf("splitCode(%q) (-want +got):\n%s", in, diff)
		}
	}
}

// TestAcronymScanner checks the scanner against what the acronyms look like: an upper-case letter and one to nine
// letters or '&' in parentheses.
func TestAcronymScanner(t *testing.T) {
	var got []string
	acronyms("Master of Financial Engineering (MFE), (R&D) and (a) (X) (TooLongAcronym) (Ok1) ((CS)) (EECS", func(open, start, end int) {
		if open != start-1 {
			t.Errorf("open %d, start %d", open, start)
		}
		got = append(got, "Master of Financial Engineering (MFE), (R&D) and (a) (X) (TooLongAcronym) (Ok1) ((CS)) (EECS"[start:end])
	})
	if want := []string{"MFE", "R&D", "CS"}; !slices.Equal(got, want) {
		t.Errorf("acronyms = %q, want %q", got, want)
	}
}

func TestLexiconBinary(t *testing.T) {
	ix := &index.Index{
		Pages: []index.Page{
			{Title: "Sustainability", URL: "https://example.org/", Markdown: "# Minors\n\nThe minor in Corporate " +
				"Sustainability (CS) is new. Its [`max_units`](https://example.org/computing#max_units) are set."},
			{Title: "Computing", URL: "https://example.org/computing", Markdown: "# Computer Science (CS)\n\n" +
				"The Computer Science (CS) major. Ünïcode wörds."},
		},
		Chunks: []index.Chunk{
			{PageID: 0, Text: "The minor in Corporate Sustainability (CS) is new."},
			{PageID: 1, Text: "The Computer Science (CS) major, majors and majoring."},
			{PageID: 1, Text: "Ünïcode wörds, computer science again."},
		},
	}
	want, err := newLexicon(ix)
	if err != nil {
		t.Fatal(err)
	}
	if want.defined["max_units"] == nil {
		t.Fatalf("the code name linked to its definition is not in the lexicon: %v", want.defined)
	}
	b := want.appendBinary(nil)
	got, err := readLexicon(b, len(ix.Pages))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := readLexicon(b, 1); err == nil {
		t.Error("readLexicon accepted a definition on a page the index does not have")
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(lexicon{})); diff != "" {
		t.Errorf("lexicon read back (-built +read):\n%s", diff)
	}
	for n := range len(b) {
		if _, err := readLexicon(b[:n], len(ix.Pages)); err == nil {
			t.Errorf("readLexicon accepted %d of %d bytes", n, len(b))
		}
	}
	if _, err := readLexicon(append(slices.Clone(b), 0), len(ix.Pages)); err == nil {
		t.Error("readLexicon accepted a trailing byte")
	}
}

func TestLexiconComplete(t *testing.T) {
	lx := newEmptyLexicon()
	for w, n := range map[string]int{"professional": 9, "professors": 3, "professor": 2, "economics": 5, "depth": 4, "prerequisite": 3} {
		lx.heading[w], lx.df[w] = n, n
	}
	lx.derive()
	for w, want := range map[string]string{
		"econ":  "economics",
		"prof":  "professional", // the most frequent heading word it begins
		"profs": "professors",   // a plural abbreviation takes a plural
		"depts": "",             // and nothing when no plural begins with it
		"reqs":  "",
		"pr":    "", // too short to complete
	} {
		if got := lx.complete(w); got != want {
			t.Errorf("complete(%q) = %q, want %q", w, got, want)
		}
	}
}
