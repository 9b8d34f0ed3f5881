package retrieval

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/ragproxy/ragproxy/retrieval/wordnet"
	"github.com/ragproxy/ragproxy/textnorm"
)

func TestSynonyms(t *testing.T) {
	// How often a made-up site uses each word, by stem: it writes "begins", "commences" and "telephone" far more
	// than "start" and "phone".
	site := map[string]int{"begin": 40, "start": 3, "commenc": 30, "end": 50, "finish": 20, "telephon": 90, "phone": 2,
		"date": 30, "locat": 12, "instruct": 10, "requir": 60, "need": 5, "get": 90, "acquir": 100, "larg": 70,
		"big": 20}
	df := func(w string) int { return site[textnorm.Stem(w)] }
	db := wordnet.Load()
	tests := []struct {
		q              string
		shapes, wnWant []string
	}{
		{"when does instruction start?", []string{"date"}, []string{"begin", "commence"}},
		{"where is the phone?", []string{"location"}, []string{"telephone"}},
		{"what do I need", nil, []string{"require"}},
		{"when does it begin", []string{"date"}, nil}, // "start" is rarer on the site than "begin"
		{"how do I get one", nil, nil},                // "get" has too many senses to trust one
		{"telephone number", nil, nil},                // the site writes "phone" less often
		{"the big file", nil, nil},                    // "big" is common enough on the site to stand alone
		{"tell me about the major", nil, nil},
	}
	for _, tt := range tests {
		shapes, got := synonyms(tt.q, db, df)
		if diff := cmp.Diff(tt.shapes, shapes); diff != "" {
			t.Errorf("synonyms(%q) shapes (-want +got):\n%s", tt.q, diff)
		}
		if diff := cmp.Diff(tt.wnWant, got); diff != "" {
			t.Errorf("synonyms(%q) WordNet (-want +got):\n%s", tt.q, diff)
		}
		if shapes, _ := synonyms(tt.q, nil, df); !cmp.Equal(shapes, tt.shapes) {
			t.Errorf("synonyms(%q) without WordNet: shapes %q, want %q", tt.q, shapes, tt.shapes)
		}
	}
}

// A synonym that is an antonym of another word of the question is never added: "purchase" is a synonym of
// "buy" and an antonym of "sell".
func TestSynonymsNoAntonyms(t *testing.T) {
	db := wordnet.Load()
	df := func(w string) int { // the site writes "purchase" and the rest far more than "buy" and "sell"
		if w == "buy" || w == "sell" {
			return 1
		}
		return 10
	}
	if _, got := synonyms("buy", db, df); !slices.Contains(got, "purchase") {
		t.Fatalf("synonyms(buy) = %q, want purchase among them", got)
	}
	if !slices.Contains(db.Antonyms("sells"), "purchase") {
		t.Fatalf("Antonyms(sells) = %q, want purchase among them", db.Antonyms("sells"))
	}
	if _, got := synonyms("who sells or buys", db, df); slices.Contains(got, "purchase") {
		t.Errorf("synonyms(who sells or buys) = %q: adds purchase, an antonym of sells", got)
	}
}

func TestDegreeBase(t *testing.T) {
	db := wordnet.Load()
	for w, want := range map[string]string{
		"highest":  "high",
		"biggest":  "big",
		"shortest": "short",
		"newer":    "new",
		"number":   "", // a noun, not "numb" made comparative
		"offer":    "",
		"modest":   "", // an adjective of its own
		"interest": "",
		"deadline": "",
	} {
		if got := degreeBase(w, db); got != want {
			t.Errorf("degreeBase(%q) = %q, want %q", w, got, want)
		}
	}
	if got := degreeBase("highest", nil); got != "" {
		t.Errorf("degreeBase without WordNet = %q", got)
	}
	// A question's superlative counts as its base in passages: "highest" holds with "High Value".
	lx := newEmptyLexicon()
	lx.df["high"], lx.df["value"] = 3, 5
	lx.derive()
	q := newPassageQuery("highest value", lx.wordForms(db))
	if _, got := q.coverage("| Name | High Value |\n|---|---|\n| timestamp | 294276 AD |"); got != 1 {
		t.Errorf("coverage of the table row = %v, want 1", got)
	}
	if _, got := newPassageQuery("highest value", lx.wordForms(nil)).coverage("| Name | High Value |\n|---|---|\n| t | 1 |"); got != 0.5 {
		t.Errorf("coverage without WordNet = %v, want 0.5", got)
	}
}

func TestPassageForms(t *testing.T) {
	db := wordnet.Load()
	lx := newEmptyLexicon()
	lx.df["numeric"], lx.df["value"], lx.df["levels"] = 4, 5, 3
	lx.derive()
	table := "## Logging Levels\n\n| Level | Numeric value |\n|---|---|\n| `ERROR` | 40 |"
	// "number" holds with the table's "Numeric": WordNet relates them, and the site writes "numeric".
	if _, got := newPassageQuery("what number is the ERROR level", lx.passageForms(db)).coverage(table); got != 1 {
		t.Errorf("coverage with related words = %v, want 1", got)
	}
	if _, got := newPassageQuery("what number is the ERROR level", lx.passageForms(nil)).coverage(table); got != 2.0/3 {
		t.Errorf("coverage without WordNet = %v, want 2/3", got)
	}
	// Query expansion does not take them.
	if got := lx.expand("what number is the ERROR level", db); strings.Contains(got, "numeric") {
		t.Errorf("expand = %q, holds a related word", got)
	}

	// An irregular inflection is the question's word: "kept" holds "keep", and "keep" "kept", when the site
	// writes the other form; a form the site never writes is not added.
	lx = newEmptyLexicon()
	lx.df["kept"], lx.df["artifacts"], lx.df["days"] = 2, 3, 4
	lx.derive()
	unit := "Artifacts should only be kept for around 30 days."
	if _, got := newPassageQuery("should we keep artifacts", lx.passageForms(db)).coverage(unit); got != 1 {
		t.Errorf("coverage with irregular forms = %v, want 1", got)
	}
	if _, got := newPassageQuery("should we keep artifacts", lx.passageForms(nil)).coverage(unit); got != 0.5 {
		t.Errorf("coverage without WordNet = %v, want 1/2", got)
	}
	if got := lx.passageForms(db)("write"); slices.Contains(got, "wrote") {
		t.Errorf("passageForms(write) = %q, holds a form the site never writes", got)
	}
}
