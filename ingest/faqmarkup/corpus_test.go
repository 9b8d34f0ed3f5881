package faqmarkup

import (
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ragproxy/ragproxy/internal/corpustest"
)

var logAll = flag.Bool("faq.all", false, "TestCorpus logs every entry, not a sample")

// corpusBase is the address the corpus pages are given: only fragments and path words ("faq") matter here.
const corpusBase = "https://corpus.test/"

// TestCorpus runs Extract over every page of a saved site (RAGPROXY_TEST_CORPUS) and logs how many entries
// of each kind it finds and a sample of them, for reading: the rules are tuned by looking at what they take
// from real pages. It fails only when Extract fails or breaks its own invariants.
func TestCorpus(t *testing.T) {
	dir := corpustest.Dir(t)
	var files []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".html") {
			files = append(files, path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no .html files under %s", dir)
	}
	counts := map[string]int{}
	pages := 0
	var all []Entry
	for _, f := range files {
		body, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(dir, f)
		pageURL := corpusBase + strings.TrimSuffix(filepath.ToSlash(rel), "index.html")
		entries, err := Extract(body, pageURL)
		if err != nil {
			t.Errorf("%s: %v", rel, err)
			continue
		}
		checkEntries(t, entries)
		if len(entries) > 0 {
			pages++
		}
		for _, e := range entries {
			counts[e.Source]++
		}
		all = append(all, entries...)
	}
	distinct := map[string]bool{}
	for _, e := range all {
		distinct[questionKey(e.Question)] = true
	}
	// Sites repeat an FAQ on several pages; Extract deduplicates within a page only.
	t.Logf("%d pages, %d with entries; entries: %d jsonld, %d details, %d dl, %d heading; %d distinct questions",
		len(files), pages, counts[SourceJSONLD], counts[SourceDetails], counts[SourceDL], counts[SourceHeading],
		len(distinct))
	// An even spread over the entries, so the sample is the same from run to run.
	const sample = 10
	for i := 0; i < sample && i < len(all); i++ {
		e := all[i*len(all)/min(sample, len(all))]
		t.Logf("%s %s\n  Q: %s\n  A: %s", e.Source, e.URL, e.Question, shorten(e.Answer, 300))
	}
	if *logAll {
		for _, e := range all {
			t.Logf("%s %s\n  Q: %s\n  A: %s", e.Source, e.URL, e.Question, shorten(e.Answer, 300))
		}
	}
}

func shorten(s string, n int) string {
	s = strings.ReplaceAll(s, "\n", " / ")
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
