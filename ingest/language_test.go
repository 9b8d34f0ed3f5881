package ingest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ragproxy/ragproxy/index"
	"github.com/ragproxy/ragproxy/ingest/clean"
)

func TestPageLanguageSignals(t *testing.T) {
	german := strings.Repeat("Die Zeilennummerierung zeigt am linken Rand neben jeder Zeile eine Nummer an. ", 3)
	english := strings.Repeat("Line numbering shows a number beside every line in the left margin of the page. ", 3)
	u := "https://help.example.org/x/page.html"
	for _, c := range []struct {
		name     string
		doc      clean.Doc
		header   string
		wantLang string
	}{
		{"markup first", clean.Doc{Lang: "fr-CA", Markdown: german}, "de", "fr"},
		{"own hreflang entry", clean.Doc{Markdown: english, Alternates: []clean.Alternate{{Lang: "de", URL: "https://help.example.org/y"}, {Lang: "it", URL: u + "#top"}}}, "", "it"},
		{"Content-Language", clean.Doc{Markdown: english}, "nl, en", "nl"},
		{"detected", clean.Doc{Markdown: german}, "", "de"},
		{"code and tables left out", clean.Doc{Markdown: "```\napt-get install the package and configure it now please\n```\n| the table | of package names and English words |\n" + german}, "", "de"},
		{"too little text", clean.Doc{Markdown: "OK"}, "", ""},
	} {
		if got, _ := pageLanguage(c.doc, u, c.header); got != c.wantLang {
			t.Errorf("%s: %q, want %q", c.name, got, c.wantLang)
		}
	}
}

func TestFillLanguagesAndVersions(t *testing.T) {
	ix := &index.Index{Pages: []index.Page{
		{URL: "https://h/en/a.html", Lang: "en"}, {URL: "https://h/de/a.html", Lang: "de"},
		{URL: "https://h/de/b.html", Lang: "de"}, {URL: "https://h/c.de.html", Lang: "de"},
		{URL: "https://h/c.fr.html", Lang: "fr"}, {URL: "https://h/d.html"}, {URL: "https://h/e.html", Lang: "fr"},
	}}
	fillLanguages(ix, func(int) bool { return true })
	if ix.Pages[5].Lang != "de" {
		t.Errorf("a page without a language took %q, want the main language de", ix.Pages[5].Lang)
	}
	docs := map[string]*doc{"https://h/e.html": {alternates: []clean.Alternate{{Lang: "de", URL: "https://h/de/b.html"}}}}
	joinVersions(ix, docs)
	want := map[int][]int{0: {1}, 1: {0}, 2: {6}, 3: {4}, 4: {3}, 6: {2}}
	for i, p := range ix.Pages {
		if got := p.Versions; len(got) != len(want[i]) || len(got) > 0 && got[0] != want[i][0] {
			t.Errorf("%s: versions %v, want %v", p.URL, got, want[i])
		}
	}
}

func TestLanguagesFromURLs(t *testing.T) {
	ix := &index.Index{Pages: []index.Page{
		{URL: "https://h/ch07.en.html", Lang: "en"}, {URL: "https://h/ch07.fr.html", Lang: "en"},
		{URL: "https://h/fr/guide/", Lang: "en"}, {URL: "https://h/en/guide/", Lang: "en"},
		{URL: "https://h/it/helpdesk.html", Lang: "en"}, {URL: "https://h/pt-BR/guide/", Lang: "pt"},
		{URL: "https://h/de/guide/", Lang: "en"},
	}}
	declared := func(i int) bool { return i == 6 }
	languagesFromURLs(ix, declared)
	for i, want := range []string{"en", "fr", "fr", "en", "en", "pt", "en"} {
		if ix.Pages[i].Lang != want {
			t.Errorf("%s: %q, want %q", ix.Pages[i].URL, ix.Pages[i].Lang, want)
		}
	}
}

func TestFillLanguagesDropsStrayDetections(t *testing.T) {
	ix := &index.Index{}
	for i := range 10 {
		ix.Pages = append(ix.Pages, index.Page{URL: fmt.Sprintf("https://h/%d", i), Lang: "en"})
	}
	ix.Pages[3].Lang, ix.Pages[4].Lang, ix.Pages[5].Lang = "fr", "", "ja"
	fillLanguages(ix, func(i int) bool { return i == 5 })
	for i, want := range map[int]string{3: "en", 4: "en", 5: "ja"} {
		if ix.Pages[i].Lang != want {
			t.Errorf("page %d: %q, want %q", i, ix.Pages[i].Lang, want)
		}
	}
}
