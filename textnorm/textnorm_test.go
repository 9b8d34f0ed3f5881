package textnorm

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

func words(s string) []string {
	var out []string
	Words(s, func(w string) bool { out = append(out, w); return true })
	return out
}

func TestWords(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"plain", "Hello, World!", []string{"hello", "world"}},
		{"gpa", "a GPA of 3.70 or 4.0.", []string{"a", "gpa", "of", "3.7", "or", "4"}},
		{"phone", "Call 510-642-1483.", []string{"call", "510-642-1483"}},
		{"price", "Tuition: $13,510 per year", []string{"tuition", "13510", "per", "year"}},
		{"list of numbers", "1,2,3 and 12,34", []string{"1", "2", "3", "and", "12", "34"}},
		{"ampersand", "College of L&S, AT&T & co", []string{"college", "of", "l&s", "at&t", "co"}},
		{"possessive", "the student's advisor's office", []string{"the", "student", "advisor", "office"}},
		{"contraction", "don’t won't", []string{"dont", "wont"}},
		{"contracted verbs", "we'd I'D you're they’ll I'm i've", []string{"we", "i", "you", "they", "i", "i"}},
		{"apostrophes in names", "O'Neill rock'n'roll Hawai'i ma'am y'all", []string{"oneill", "rocknroll", "hawaii", "maam", "yall"}},
		{"hyphen words", "part-time non-resident", []string{"part", "time", "non", "resident"}},
		{"academic year", "Guide 2016-17, fall 8/24", []string{"guide", "2016-17", "fall", "8/24"}},
		{"codes", "CS61A and MATH 1B", []string{"cs61a", "and", "math", "1b"}},
		{"unicode", "Café Zürich naïve", []string{"café", "zürich", "naïve"}},
		// Decimal digits of other scripts are read as ASCII's: a Persian page's port "۴۹۴۹" is a question's "4949".
		{"digits of other scripts", "درگاه ۴۹۴۹، ٥٠٠ पृष्ठ ५०० ๒๕", []string{"درگاه", "4949", "500", "पृष्ठ", "500", "25"}},
		{"trailing punctuation", "units. units, 3. end", []string{"units", "units", "3", "end"}},
		{"empty", " -- $ % ", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, words(tt.in)); diff != "" {
				t.Errorf("Words(%q) (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestWordsStopsEarly(t *testing.T) {
	var got []string
	Words("one two three", func(w string) bool { got = append(got, w); return len(got) < 2 })
	if diff := cmp.Diff([]string{"one", "two"}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestStem(t *testing.T) {
	// Examples from Porter's paper and the reference vocabulary.
	tests := map[string]string{
		"caresses": "caress", "ponies": "poni", "ties": "ti", "caress": "caress", "cats": "cat",
		"feed": "feed", "agreed": "agre", "plastered": "plaster", "bled": "bled", "motoring": "motor",
		"sing": "sing", "conflated": "conflat", "troubled": "troubl", "sized": "size", "hopping": "hop",
		"tanned": "tan", "falling": "fall", "hissing": "hiss", "fizzed": "fizz", "failing": "fail",
		"filing": "file", "happy": "happi", "sky": "sky", "relational": "relat", "conditional": "condit",
		"rational": "ration", "valenci": "valenc", "digitizer": "digit", "conformabli": "conform",
		"radicalli": "radic", "differentli": "differ", "vileli": "vile", "analogousli": "analog",
		"vietnamization": "vietnam", "predication": "predic", "operator": "oper", "feudalism": "feudal",
		"decisiveness": "decis", "hopefulness": "hope", "callousness": "callous", "formaliti": "formal",
		"sensitiviti": "sensit", "sensibiliti": "sensibl", "triplicate": "triplic", "formative": "form",
		"formalize": "formal", "electriciti": "electr", "electrical": "electr", "goodness": "good",
		"revival": "reviv", "allowance": "allow", "inference": "infer", "airliner": "airlin",
		"adjustable": "adjust", "defensible": "defens", "irritant": "irrit", "replacement": "replac",
		"adjustment": "adjust", "dependent": "depend", "adoption": "adopt", "homologou": "homolog",
		"communism": "commun", "activate": "activ", "angulariti": "angular", "homologous": "homolog",
		"effective": "effect", "bowdlerize": "bowdler", "probate": "probat", "rate": "rate",
		"cease": "ceas", "controll": "control", "roll": "roll", "generalizations": "gener",
		"oscillators": "oscil", "requirements": "requir", "required": "requir", "units": "unit",
		"courses": "cours", "cs61a": "cs61a", "3.7": "3.7", "is": "is", "café": "café",
	}
	for in, want := range tests {
		if got := Stem(in); got != want {
			t.Errorf("Stem(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestTerms(t *testing.T) {
	for q, want := range map[string][]string{
		"How many upper division units are required for the Bioengineering majors?": {"mani", "upper", "divis", "unit", "requir", "bioengin", "major"},
		// contracted verbs leave their pronoun, a stopword, not the words "wed" and "id"
		"we'd like to know if i'd need an id": {"like", "know", "need", "id"},
	} {
		var got []string
		Terms(q, func(w string) bool {
			got = append(got, w)
			return true
		})
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Terms(%q) (-want +got):\n%s", q, diff)
		}
	}
}

func FuzzWords(f *testing.F) {
	for _, s := range []string{"Hello, World!", "$13,510", "510-642-1483", "L&S", "student's", "3.70", "1.2.3", "don’t", "0.00", "a'", "'s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		Words(s, func(w string) bool {
			if w == "" {
				t.Fatalf("empty word from %q", s)
			}
			if utf8.ValidString(s) && w != strings.ToLower(w) {
				t.Fatalf("word %q from %q is not lowercase", w, s)
			}
			if strings.ContainsAny(w, " \t\n,;:!?\"()[]{}$%") {
				t.Fatalf("word %q from %q contains a separator", w, s)
			}
			_ = Stem(w)
			return true
		})
	})
}

func BenchmarkTerms(b *testing.B) {
	text := strings.Repeat("Students must complete 42 upper-division units, including the L&S breadth requirements, with a GPA of 3.70; call 510-642-1483. ", 20)
	b.ReportAllocs()
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		Terms(text, func(string) bool { return true })
	}
}

func TestCompounds(t *testing.T) {
	for s, want := range map[string][]string{
		"what is typing.TYPE_CHECKING set to?":  {"typing.type_checking", "type_checking"},
		"max_connections=100; work_mem.":        {"max_connections", "work_mem"},
		"os.path.join() and dict.fromkeys(x)":   {"os.path.join", "path.join", "dict.fromkeys"},
		"~/.pgpass and .asf.yaml":               {"asf.yaml"},
		"__init__ and _private and trailing_":   nil, // one part each
		"version 3.11, the 2016_17 catalog, 8.": nil, // numbers
		// A URL's host, path and anchor are not names the text gives.
		"[debug](https://docs.python.org/3.11/library/logging.html#logging.debug)": nil,
	} {
		var got []string
		Compounds(s, func(n string) bool { got = append(got, n); return true })
		if !cmp.Equal(got, want) {
			t.Errorf("Compounds(%q) = %q, want %q", s, got, want)
		}
	}
	n := 0
	Compounds("a.b c.d e.f", func(string) bool { n++; return false })
	if n != 1 {
		t.Errorf("Compounds went on after yield returned false: %d names", n)
	}
}
