package clean

import (
	"testing"
)

func TestMarkupLanguage(t *testing.T) {
	page := `<!doctype html><html xml:lang="de-CH"><head><title>T</title>
<meta http-equiv="Content-Language" content="fr, en">
<link rel="alternate" hreflang="en" href="/en/t.html#x"><link rel="alternate stylesheet" href="/s.css">
<link rel="Alternate" hreflang="de" href="t.html"></head><body><main><p>Text.</p></main></body></html>`
	d, err := HTML([]byte(page), "https://example.org/de/t.html", Config{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Lang != "de-CH" {
		t.Errorf("lang %q, want xml:lang's de-CH", d.Lang)
	}
	want := []Alternate{{Lang: "en", URL: "https://example.org/en/t.html"}, {Lang: "de", URL: "https://example.org/de/t.html"}}
	if len(d.Alternates) != 2 || d.Alternates[0] != want[0] || d.Alternates[1] != want[1] {
		t.Errorf("alternates %+v, want %+v", d.Alternates, want)
	}
	d, _ = HTML([]byte(`<html><head><meta http-equiv="content-language" content=" fr , en"></head><body><p>x</p></body></html>`), "https://example.org/", Config{})
	if d.Lang != "fr" {
		t.Errorf("meta content-language gives %q, want fr", d.Lang)
	}
	d, _ = HTML([]byte(`<html lang="ja"><body><p>x</p></body></html>`), "https://example.org/", Config{})
	if d.Lang != "ja" || d.Alternates != nil {
		t.Errorf("html lang: %+v", d)
	}
}
