package faq

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/ragproxy/ragproxy/textnorm"
)

// An entry is read in its Lang, else in the language its text is surely written in, else in English; the example
// site's entries, English, stay English.
func TestEntryLanguage(t *testing.T) {
	for _, c := range []struct {
		e    Entry
		want string
	}{
		{Entry{Question: "Wann beginnt das Wintersemester?", Answer: "Die Vorlesungen beginnen am 14. Oktober."}, "de"},
		{Entry{Question: "Quand commence le semestre d'automne ?", Answer: "Les cours commencent le 16 septembre."}, "fr"},
		{Entry{Question: "¿Cuándo empiezan las clases?", Answer: "Las clases empiezan el 2 de septiembre."}, "es"},
		{Entry{Question: "授業はいつ始まりますか？", Answer: "授業は9月2日に始まります。"}, "ja"},
		{Entry{Question: "Where is the library?", Answer: "Building 4."}, "en"},
		{Entry{Question: "Wo ist die Bibliothek?", Answer: "Gebäude 4.", Lang: "de-CH"}, "de"},
		{Entry{Question: "Parking?", Answer: "Lot B.", Lang: "fr"}, "fr"}, // Lang decides
	} {
		if got := tag(entryLanguage(&c.e)); got != c.want {
			t.Errorf("%q: read as %q, want %q", c.e.Question, got, c.want)
		}
	}
	entries, err := Load(filepath.Join("..", "..", "examples", "faq.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if l := entryLanguage(&e); l != nil {
			t.Errorf("example entry %q read as %q, want English", e.Question, l.Tag())
		}
	}
}

// A question meets an entry of another language in that language's forms: inflections meet, articles do not
// count, and the question words that change what is asked keep near misses below the direct threshold.
func TestMatchInEntryLanguage(t *testing.T) {
	m := NewMatcher([]Entry{
		{Question: "Wann beginnen die Vorlesungen im Wintersemester?", Answer: "Am 14. Oktober.", URL: "https://u.example/de/kalender/"},
		{Question: "Wo ist die Bibliothek?", Answer: "Im Gebäude 4.", URL: "https://u.example/de/bibliothek/"},
		{Question: "Quand commencent les cours du semestre d'automne ?", Answer: "Le 16 septembre.", URL: "https://u.example/fr/calendrier/"},
		{Question: "授業はいつ始まりますか？", Answer: "9月2日です。", URL: "https://u.example/ja/calendar/"},
		{Question: "When do fall classes begin?", Answer: "August 26.", URL: "https://u.example/en/calendar/"},
	})
	for _, c := range []struct {
		q, want string
		direct  bool
	}{
		{"Wann beginnen die Vorlesungen im Wintersemester?", "Wann beginnen die Vorlesungen im Wintersemester?", true},
		{"wann beginne ich eine Vorlesung im Wintersemester", "Wann beginnen die Vorlesungen im Wintersemester?", true},
		{"Wo beginnen die Vorlesungen im Wintersemester?", "Wann beginnen die Vorlesungen im Wintersemester?", false},
		{"Wo sind die Bibliotheken?", "Wo ist die Bibliothek?", true},
		{"Wann ist die Bibliothek offen?", "Wo ist die Bibliothek?", false},
		{"quand commencent des cours au semestre d'automne", "Quand commencent les cours du semestre d'automne ?", true},
		{"pourquoi commencent les cours du semestre d'automne", "Quand commencent les cours du semestre d'automne ?", false},
		{"授業はいつ始まりますか", "授業はいつ始まりますか？", true},
		{"授業はどこで始まりますか", "授業はいつ始まりますか？", false},
		{"when do fall classes start", "When do fall classes begin?", true}, // English keeps its synonyms
		// A compound whose parts the entries write is read as its parts.
		{"Wintersemestervorlesungen: wann beginnen die?", "Wann beginnen die Vorlesungen im Wintersemester?", true},
	} {
		got, ok := m.Match(c.q)
		if !ok || got.Entry.Question != c.want || (got.Score >= DefaultDirectThreshold) != c.direct {
			t.Errorf("Match(%q) = %q at %.3f, want %q answered directly: %v", c.q, got.Phrasing, got.Score, c.want, c.direct)
		}
	}
	// Read as English, as before entries had languages, the German inflections did not meet.
	en := NewMatcher([]Entry{{Question: "Wann beginnen die Vorlesungen im Wintersemester?", Answer: "Am 14. Oktober.",
		URL: "https://u.example/de/kalender/", Lang: "en"}})
	if got, _ := en.Match("wann beginne ich eine Vorlesung im Wintersemester"); got.Score >= DefaultDirectThreshold {
		t.Errorf("the English analysis met the German inflections (%.3f)", got.Score)
	}
}

// Each question word kept for a language is a stopword of it (the others are terms anyway), as Normalize writes it.
func TestQuestionWordsAreStopwords(t *testing.T) {
	for tag, words := range questionWordsIn {
		l := textnorm.LanguageOf(tag)
		for w := range words {
			if n := l.Normalize(w); n != w || !l.IsStopword(w) {
				t.Errorf("%s %q: normalised %q, a stopword: %v", tag, w, n, l.IsStopword(w))
			}
		}
	}
}

func TestLoadRefusesBadLang(t *testing.T) {
	_, err := Load(write(t, "faq.jsonl", `{"question":"q?","answer":"a","url":"https://x.example/","lang":"deutsch!"}`+"\n"))
	if err == nil {
		t.Fatal("a lang that is no language tag loaded")
	}
	es, err := Load(write(t, "faq.yaml", "- question: Wo ist die Bibliothek?\n  answer: Gebäude 4.\n  url: https://x.example/\n  lang: de\n"))
	if err != nil || len(es) != 1 || es[0].Lang != "de" {
		t.Fatalf("entries %+v, err %v", es, err)
	}
}

// WithLanguage gives an entry that does not say its language the one its text surely is in, else the site's: a
// German site's terse entry is read as German ("Parkplatz" meets "Parkplätze"), a plainly English one stays English.
func TestWithLanguage(t *testing.T) {
	entries := []Entry{
		{Question: "Parkplätze?", Answer: "Parkplatz B.", URL: "https://u.example/de/"},
		{Question: "Where is the library and when does it open?", Answer: "In building 4, from 8 a.m.", URL: "https://u.example/"},
		{Question: "Wifi?", Answer: "LPC-Secure.", URL: "https://u.example/", Lang: "en"},
	}
	got := WithLanguage(entries, "de")
	if langs := []string{got[0].Lang, got[1].Lang, got[2].Lang}; !slices.Equal(langs, []string{"de", "en", "en"}) {
		t.Errorf("languages %q, want de, en, en", langs)
	}
	if entries[0].Lang != "" {
		t.Error("WithLanguage changed its argument")
	}
	if m, ok := NewMatcher(got).Match("Parkplatz?"); !ok || m.Score < DefaultDirectThreshold {
		t.Errorf("read as German: %+v", m)
	}
	if m, ok := NewMatcher(entries).Match("Parkplatz?"); ok && m.Score >= DefaultDirectThreshold {
		t.Errorf("read as English, the forms met: %+v", m)
	}
}
