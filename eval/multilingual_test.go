package eval_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ragproxy/ragproxy/eval"
	"github.com/ragproxy/ragproxy/internal/indextest"
	"github.com/ragproxy/ragproxy/retrieval"
	"github.com/ragproxy/ragproxy/retrieval/lexical"
)

// The Debian Reference (RAGPROXY_TEST_CORPUS_DEBIAN_REFERENCE; debian-reference-en, -de, -fr and -ja, whose HTML
// lands in /usr/share/debian-reference): DocBook XSL, 15 pages per language named ch02.de.html, ch02.en.html ...,
// no language in the markup (detected from the text, and from the file names once they name the versions of one
// chapter), and translations that leave parts of some chapters in English. One site of 60 pages in four languages, asked the same 16 questions in each (testdata/multilingual),
// each question's expected page the chapter in its own language. The floors sit just under what retrieval
// reaches; English is held where the other sites are.
var (
	debianReferenceBaseURL = "https://www.debian.org/doc/manuals/debian-reference/"
	multilingualFloors     = map[string]floor{
		"en": {fact: 0.93, hit8: 0.99, mrr: 0.93},
		"de": {fact: 0.93, hit8: 0.99, mrr: 0.83},
		"fr": {fact: 0.81, hit8: 0.93, mrr: 0.73},
		"ja": {fact: 0.81, hit8: 0.93, mrr: 0.81},
	}
)

func TestDebianReferenceMultilingualQuality(t *testing.T) {
	src := os.Getenv("RAGPROXY_TEST_CORPUS_DEBIAN_REFERENCE")
	if src == "" {
		t.Skip("RAGPROXY_TEST_CORPUS_DEBIAN_REFERENCE is not set (the HTML of debian-reference-en, -de, -fr and -ja, installed at /usr/share/debian-reference)")
	}
	// The directory also holds each language's PDF and plain text, the whole book in one file: the site is
	// the HTML pages (index.html only redirects to a language's index).
	site := t.TempDir()
	pages, err := filepath.Glob(filepath.Join(src, "*.*.html"))
	if err != nil || len(pages) == 0 {
		t.Fatalf("no pages in %s (%v)", src, err)
	}
	for _, p := range pages {
		lang := strings.Split(filepath.Base(p), ".")[1]
		if _, ok := multilingualFloors[lang]; !ok {
			continue
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(site, filepath.Base(p)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var sets []questionSet
	for _, lang := range []string{"en", "de", "fr", "ja"} {
		sets = append(sets, questionSet{lang, testQuestions(t, "multilingual", "debian-reference-"+lang+".jsonl"),
			multilingualFloors[lang]})
	}
	idx := checkQuality(t, site, debianReferenceBaseURL, sets...)

	// The ablation of the analysis: each part off in turn. Without bigrams a Japanese question is one or two
	// whole runs that no page holds, and its BM25 lists are empty.
	r, _ := indextest.Open(t, idx)
	mrr := map[string]map[string]float64{}
	for _, v := range []struct {
		name string
		an   lexical.Analyzer
	}{{"full", lexical.Analyzer{}}, {"no stemmer", lexical.Analyzer{NoStem: true}},
		{"no compounds", lexical.Analyzer{NoCompounds: true}}, {"no bigrams", lexical.Analyzer{NoBigrams: true}}} {
		cfg := r.Config()
		cfg.Analysis = v.an
		rv := r.WithConfig(cfg)
		mrr[v.name] = map[string]float64{}
		for _, set := range sets {
			m, err := eval.Retrieve(context.Background(), rv, retrieval.Heuristic{}, set.questions)
			if err != nil {
				t.Fatal(err)
			}
			mrr[v.name][set.name] = m.MRR
			t.Logf("ablation %s, %s: fact-in-context %.3f, Hit@8 %.3f, MRR %.3f", v.name, set.name, m.FactInContext, m.Hit[8], m.MRR)
		}
	}
	if mrr["no compounds"]["de"] >= mrr["full"]["de"] {
		t.Errorf("German without compound splitting: MRR %.3f, with %.3f", mrr["no compounds"]["de"], mrr["full"]["de"])
	}
	if mrr["no bigrams"]["ja"] >= mrr["full"]["ja"] {
		t.Errorf("Japanese without bigrams: MRR %.3f, with %.3f", mrr["no bigrams"]["ja"], mrr["full"]["ja"])
	}
}
