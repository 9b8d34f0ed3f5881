package faq

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ragproxy/ragproxy/retrieval/wordnet"
)

func write(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadFormats(t *testing.T) {
	const url = "https://www.example.edu/fees/"
	files := map[string]string{
		"faq.jsonl": `{"question":"How much is parking?","answer":"$180 a year.","url":"` + url + `","alternatives":["parking permit price?"]}` + "\n\n# a comment\n",
		"faq.json":  `[{"question":"How much is parking?","answer":"$180 a year.","url":"` + url + `","alternatives":["parking permit price?"]}]`,
		"faq.yaml":  "- question: How much is parking?\n  answer: $180 a year.\n  url: " + url + "\n  alternatives:\n    - parking permit price?\n",
	}
	for name, text := range files {
		t.Run(name, func(t *testing.T) {
			es, err := Load(write(t, name, text))
			if err != nil {
				t.Fatal(err)
			}
			if len(es) != 1 || es[0].Question != "How much is parking?" || es[0].URL != url || es[0].Source != "operator" ||
				len(es[0].Alternatives) != 1 {
				t.Errorf("entries = %+v", es)
			}
		})
	}
}

func TestLoadRefusesIncompleteEntries(t *testing.T) {
	cases := map[string]string{
		"no answer":    `{"question":"q?","url":"https://x.example/"}`,
		"no question":  `{"answer":"a","url":"https://x.example/"}`,
		"relative url": `{"question":"q?","answer":"a","url":"/fees/"}`,
		"bad json":     `{"question":`,
	}
	for name, line := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := Load(write(t, "faq.jsonl", line+"\n"))
			if err == nil || !strings.Contains(err.Error(), "faq.jsonl") {
				t.Errorf("err = %v, want an error naming the file", err)
			}
		})
	}
}

func TestMatch(t *testing.T) {
	m := NewMatcher([]Entry{
		{Question: "When do fall classes begin?", Answer: "August 26.", URL: "https://x.example/cal/"},
		{Question: "When do spring classes begin?", Answer: "January 21.", URL: "https://x.example/cal/"},
		{Question: "Where is the library?", Answer: "Building 4.", URL: "https://x.example/lib/",
			Alternatives: []string{"library location"}},
		{Question: "When do fall classes begin?", Answer: "a duplicate, dropped", URL: "https://x.example/dup/"},
		{Question: "", Answer: "no question, dropped", URL: "https://x.example/"},
	})
	if m.Len() != 3 {
		t.Errorf("Len = %d, want 3 (duplicate and empty question dropped)", m.Len())
	}
	cases := []struct {
		q, want string
		min     float64
	}{
		{"when do fall classes begin", "When do fall classes begin?", 1},
		{"fall classes begin when?", "When do fall classes begin?", 1},
		{"library location", "Where is the library?", 1},
		{"when do spring classes begin", "When do spring classes begin?", 1},
	}
	for _, c := range cases {
		got, ok := m.Match(c.q)
		if !ok || got.Entry.Question != c.want || got.Score < c.min-1e-9 {
			t.Errorf("Match(%q) = %+v, want %q at >= %.2f", c.q, got, c.want, c.min)
		}
	}
	// Near misses: the word that differs weighs most, so they stay below the direct threshold.
	for _, q := range []string{"where do fall classes begin", "when do summer classes begin", "when do fall classes end"} {
		if got, _ := m.Match(q); got.Score >= DefaultDirectThreshold {
			t.Errorf("near miss %q matched %q at %.3f", q, got.Entry.Question, got.Score)
		}
	}
	if _, ok := m.Match("the of and"); ok {
		t.Error("a question of stopwords must not match")
	}
}

// TestMatchSynonyms checks that a paraphrase with WordNet synonyms of the FAQ's words in their frequent senses is
// answered directly, and that a word of another meaning, or a rare sense, is no bridge.
func TestMatchSynonyms(t *testing.T) {
	m := NewMatcher([]Entry{
		{Question: "When do fall 2024 classes begin?", Answer: "August 26.", URL: "https://u.example/calendar/"},
		{Question: "What was the college called when it opened?", Answer: "Lakeshore Institute.", URL: "https://u.example/history/"},
		{Question: "How much is the library fine for a late book?", Answer: "$1 a day.", URL: "https://u.example/library/"},
		{Question: "When is the last day to drop a class?", Answer: "September 20.", URL: "https://u.example/drop/"},
	})
	for _, tc := range []struct {
		question, want string
		direct         bool
	}{
		{"when do fall 2024 classes start", "When do fall 2024 classes begin?", true},
		{"what was the college named when it opened", "What was the college called when it opened?", true},
		{"when do fall 2024 classes end", "When do fall 2024 classes begin?", false},             // an antonym, not a synonym
		{"when is the last day to fall a class", "When is the last day to drop a class?", false}, // "fall" is a rare sense of "drop"
	} {
		got, ok := m.Match(tc.question)
		if !ok || got.Entry.Question != tc.want || (got.Score >= DefaultDirectThreshold) != tc.direct {
			t.Errorf("Match(%q) = %q at %.3f, want %q answered directly: %v", tc.question, got.Phrasing, got.Score, tc.want, tc.direct)
		}
	}
}

// BenchmarkMatch is the cost of matching one question against the example site's FAQ, synonyms included (WordNet
// loaded beforehand, as a serving process has it).
func BenchmarkMatch(b *testing.B) {
	entries, err := Load(filepath.Join("..", "..", "examples", "faq.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	m := NewMatcher(entries)
	wordnet.Load()
	b.ReportAllocs()
	for b.Loop() {
		m.Match("what day do fall 2024 courses commence?")
	}
}
