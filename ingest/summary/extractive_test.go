package summary

import (
	"strings"
	"testing"
	"unicode"

	"github.com/google/go-cmp/cmp"
)

func TestExtractive(t *testing.T) {
	docs := []Doc{
		{Title: "Cognitive Science", Markdown: "# Cognitive Science\n\n## About the Program\n\n" +
			"Cognitive science is the cross-disciplinary study of the mind. Students take psychology, linguistics and computer science.\n\n" +
			"## Major Requirements\n\n* Lower division: 6 courses\n* Upper division neuroscience electives\n"},
		{Title: "Economics", Markdown: "# Economics\n\nThe economics department studies markets and incentives across the world economy.\n\n## Contact\n\nChair: Shachar Kariv\n"},
		{Title: "Tuition", Markdown: "Fees for the year.\n\n| Item | Cost |\n| --- | --- |\n| Tuition & Fees | $13,510 |\n"},
	}
	got := Extractive(docs, ExtractiveConfig{})
	if len(got) != len(docs) {
		t.Fatalf("got %d summaries for %d docs", len(got), len(docs))
	}
	for i, want := range []struct {
		prefix   string
		contains []string
		absent   []string
	}{
		{"Cognitive Science: About the Program; Major Requirements.",
			[]string{"cross-disciplinary study of the mind.", "Key terms:", "cognitive"}, []string{"#", "*"}},
		{"Economics: Contact.", []string{"markets and incentives", "kariv"}, []string{"Chair: Shachar"}},
		{"Tuition.", []string{"Key terms:"}, []string{"|", "Fees for the year"}},
	} {
		s := got[i]
		if !strings.HasPrefix(s, want.prefix) {
			t.Errorf("summary %d = %q, want prefix %q", i, s, want.prefix)
		}
		for _, c := range want.contains {
			if !strings.Contains(s, c) {
				t.Errorf("summary %d = %q, want it to contain %q", i, s, c)
			}
		}
		for _, c := range want.absent {
			if strings.Contains(s, c) {
				t.Errorf("summary %d = %q, must not contain %q", i, s, c)
			}
		}
		if strings.Contains(s, "\n") {
			t.Errorf("summary %d spans lines: %q", i, s)
		}
	}
}

func TestExtractiveBoundsLength(t *testing.T) {
	long := Doc{Title: "Long", Markdown: strings.Repeat("## Heading number something\n\nA sentence that goes on and on with words. ", 200)}
	s := Extractive([]Doc{long}, ExtractiveConfig{MaxChars: 300})[0]
	if len(s) > 300+len("…") {
		t.Fatalf("summary has %d bytes, want <= 300: %q", len(s), s)
	}
}

func TestSplitSentences(t *testing.T) {
	got := splitSentences("Dr. Smith teaches it. It starts in Fall, e.g. in Aug. 2016. Is it hard? Yes")
	want := []string{"Dr. Smith teaches it.", "It starts in Fall, e.g. in Aug. 2016.", "Is it hard?", "Yes"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("splitSentences (-want +got):\n%s", diff)
	}
}

func TestPlain(t *testing.T) {
	got := plain("**Bold** and [a link](http://x/y) and ![img](i.png) `code`")
	if want := "Bold and a link and img code"; got != want {
		t.Errorf("plain = %q, want %q", got, want)
	}
}

// wordsReference is the plain definition termCounts implements without allocating per word.
func wordsReference(s string) map[string]int {
	tf := map[string]int{}
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) }) {
		if len(w) > 2 && len(w) < 25 && !stopwords[w] && !strings.HasPrefix(w, "http") {
			tf[w]++
		}
	}
	return tf
}

func termMap(t terms) map[string]int {
	m := map[string]int{}
	for k, w := range t.words {
		m[w] = t.counts[k]
	}
	return m
}

func TestTermCounts(t *testing.T) {
	for _, s := range []string{
		"",
		"The Economics department: ECONOMICS, economics and the https://x.y/econ link",
		"İstanbul ÉCOLE Straße naïve café résumé ΣΟΦΊΑ",
		"abcdefghijklmnopqrstuvwx abcdefghijklmnopqrstuvwxy abcdefghijklmnopqrstuvwxyzzz end",
		"ééééééééééééé éééééééééééé x\xffyyy\xc3zzz",
		"C&S l&s 3.70 don't students' HTTP httpd http",
	} {
		if diff := cmp.Diff(wordsReference(s), termMap(termCounts(s))); diff != "" {
			t.Errorf("termCounts(%q) (-want +got):\n%s", s, diff)
		}
	}
}

func FuzzTermCounts(f *testing.F) {
	f.Add("The Economics department: ECONOMICS, economics")
	f.Add("İstanbul ÉCOLE Straße naïve x\xffyyy")
	f.Add("abcdefghijklmnopqrstuvwxy ééééééééééééé")
	f.Fuzz(func(t *testing.T, s string) {
		if diff := cmp.Diff(wordsReference(s), termMap(termCounts(s))); diff != "" {
			t.Errorf("termCounts(%q) (-want +got):\n%s", s, diff)
		}
	})
}
