package retrieval_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ragproxy/ragproxy/index"
	"github.com/ragproxy/ragproxy/internal/indextest"
)

// multilingualSite writes a small word processor's help in English, German and Japanese: the English and German
// pages declare their language in their markup and name each other with hreflang, the Japanese pages declare
// nothing (their script tells), and the same paths under /en/, /de/ and /ja/ are one page's versions.
func multilingualSite(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	type page struct{ lang, path, title, body string }
	pages := []page{
		{"en", "numbering.html", "Line numbering", "Line numbering shows a number beside every line in the left margin. Turn on line numbering from the Format menu; numbers restart on each page if you choose so."},
		{"en", "paragraphs.html", "Formatting paragraphs", "Set the indents and the spacing before and after a paragraph. A paragraph style keeps these settings for every paragraph that uses it."},
		{"en", "printing.html", "Printing", "Choose the printer and the number of copies, then print the document or a range of pages."},
		{"de", "numbering.html", "Zeilennummerierung", "Die Zeilennummerierung zeigt am linken Rand neben jeder Zeile eine Nummer. Schalten Sie die Zeilennummerierung im Menü Format ein; die Nummern beginnen auf Wunsch auf jeder Seite neu."},
		{"de", "paragraphs.html", "Absätze formatieren", "Legen Sie die Einzüge und die Abstände vor und nach den Absätzen fest. Eine Absatzvorlage behält diese Einstellungen für alle Absätze, die sie verwenden."},
		{"de", "printing.html", "Drucken", "Wählen Sie den Drucker und die Anzahl der Kopien und drucken Sie das Dokument oder einen Bereich von Seiten."},
		{"", "ja/numbering.html", "行番号", "行番号は左余白の各行の横に番号を表示します。書式メニューから行番号をオンにします。ページごとに番号を振り直すこともできます。"},
		{"", "ja/paragraphs.html", "段落の書式", "段落の前後の間隔とインデントを設定します。段落スタイルは、それを使うすべての段落にこの設定を保ちます。"},
		{"", "ja/printing.html", "印刷", "プリンターと部数を選び、文書またはページ範囲を印刷します。"},
	}
	for _, p := range pages {
		path := p.path
		attr := ""
		links := ""
		if p.lang != "" {
			path = p.lang + "/" + p.path
			attr = ` lang="` + p.lang + `"`
			for _, l := range []string{"en", "de"} {
				links += `<link rel="alternate" hreflang="` + l + `" href="/` + l + "/" + p.path + `">`
			}
		}
		html := "<!doctype html><html" + attr + "><head><title>" + p.title + "</title>" + links +
			"</head><body><main><h1>" + p.title + "</h1><p>" + p.body + "</p>" +
			`<p><a href="/en/numbering.html">1</a> <a href="/en/paragraphs.html">2</a> <a href="/en/printing.html">3</a></p>` +
			"</main></body></html>"
		full := filepath.Join(dir, path)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(html), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestMultilingualSite(t *testing.T) {
	idx := t.TempDir()
	indextest.Build(t, multilingualSite(t), "https://help.example.org/", idx)
	ix, err := index.Load(idx)
	if err != nil {
		t.Fatal(err)
	}
	langs := map[string]string{}
	for i, p := range ix.Pages {
		langs[strings.TrimPrefix(p.URL, "https://help.example.org/")] = p.Lang
		if len(p.Versions) != 2 {
			t.Errorf("%s has versions %v, want its two other languages", p.URL, p.Versions)
		}
		for _, c := range p.Chunks {
			if ix.ChunkLang(c) != ix.PageLang(i) {
				t.Errorf("chunk %d of %s is in %s", c, p.URL, ix.ChunkLang(c))
			}
		}
	}
	for path, want := range map[string]string{"en/numbering.html": "en", "de/paragraphs.html": "de", "ja/printing.html": "ja"} {
		if langs[path] != want {
			t.Errorf("%s is in %q, want %q", path, langs[path], want)
		}
	}
	if st := index.ComputeStats(ix); len(st.Languages) != 3 || st.VersionedPages != 9 {
		t.Errorf("stats: languages %+v, versioned pages %d", st.Languages, st.VersionedPages)
	}

	r, _ := indextest.Open(t, idx)
	for _, c := range []struct{ question, lang, page string }{
		{"Wie kann ich die Zeilen nummerieren?", "de", "de/numbering.html"},
		{"Wo lege ich die Abstände für einen Absatz fest?", "de", "de/paragraphs.html"},
		{"行番号をオンにするには？", "ja", "ja/numbering.html"},
		{"How do I turn on line numbering?", "en", "en/numbering.html"},
	} {
		res, err := r.Retrieve(context.Background(), c.question, nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.Lang != c.lang {
			t.Errorf("%q read as %q, want %q", c.question, res.Lang, c.lang)
		}
		if len(res.Pages) == 0 || !strings.HasSuffix(res.Pages[0].URL, c.page) {
			t.Errorf("%q found %v, want %s first", c.question, pageURLs(res.Pages), c.page)
		}
		for _, p := range res.Pages {
			if !strings.Contains(p.URL, "/"+c.lang+"/") {
				t.Errorf("%q kept %s, not the version in its language", c.question, p.URL)
			}
		}
	}
}
