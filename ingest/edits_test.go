package ingest

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ragproxy/ragproxy/embedding"
	"github.com/ragproxy/ragproxy/index"
)

func apply(t *testing.T, dir string, edits *Edits) *Report {
	t.Helper()
	rep, err := Apply(context.Background(), Config{IndexDir: dir, Logger: quiet()}, edits)
	if err != nil {
		t.Fatalf("Apply: %v", err)
	}
	return rep
}

// linksOf returns the URLs page url links to in ix, or nil when ix lacks the page.
func linksOf(ix *index.Index, url string) []string {
	p, ok := ix.PageByURL(url)
	if !ok {
		return nil
	}
	out := []string{}
	for _, l := range p.Links {
		out = append(out, ix.Pages[l].URL)
	}
	return out
}

func urlsOf(ix *index.Index) []string {
	var out []string
	for _, p := range ix.Pages {
		out = append(out, p.URL)
	}
	return out
}

// TestApplyAndReingestKeepEdits puts and deletes pages with Apply, then re-ingests the site: the edits hold until
// they are forgotten.
func TestApplyAndReingestKeepEdits(t *testing.T) {
	src := writeSite(t, t.TempDir(), smallSite())
	dir := filepath.Join(t.TempDir(), "ix")
	first := ingestSite(t, src, dir, nil)

	if rep := apply(t, dir, &Edits{}); rep.Changed || rep.Version != first.Version || rep.Reused != rep.Pages {
		t.Fatalf("applying no edits must leave the version as it is: %+v (first %s)", rep, first.Version)
	}

	edits := &Edits{}
	put := PutPage{URL: siteBase + "observatory/", Edit: Edit{At: time.Now().UTC(), By: "adm-****0000"},
		HTML: page("Observatory", "astronomy", "/physics/", "/nowhere/")}
	edits.PutPage(put)
	rep := apply(t, dir, edits)
	ix := load(t, dir)
	if !rep.Changed || rep.Pages != first.Pages+1 || ix.Manifest.Version != rep.Version {
		t.Fatalf("after the put: %+v", rep)
	}
	if diff := cmp.Diff([]string{siteBase, siteBase + "physics/"}, linksOf(ix, put.URL)); diff != "" {
		t.Errorf("the put page's links to indexed pages (-want +got):\n%s", diff)
	}
	p, _ := ix.PageByURL(put.URL)
	if p.Title != "Observatory" || len(p.Chunks) == 0 || !strings.Contains(ix.Chunks[p.Chunks[0]].Text, "astronomy") {
		t.Errorf("put page: title %q, %d chunks", p.Title, len(p.Chunks))
	}
	saved, err := LoadEdits(dir)
	if err != nil || saved.Put[put.URL].HTML != put.HTML {
		t.Fatalf("the edits were not saved: %+v, %v", saved, err)
	}

	edits.Delete(siteBase+"physics/", Edit{At: time.Now().UTC()})
	rep = apply(t, dir, edits)
	ix = load(t, dir)
	if rep.Removed != 1 || rep.Pages != first.Pages {
		t.Errorf("after the delete: %+v", rep)
	}
	for _, p := range ix.Pages {
		if p.URL == siteBase+"physics/" || slices.Contains(linksOf(ix, p.URL), siteBase+"physics/") {
			t.Errorf("page %s is, or links to, the deleted page", p.URL)
		}
	}
	edited := urlsOf(ix)

	// A re-ingest of the unchanged site reads physics/ again and knows nothing of observatory/: the edits win.
	// (Link cleaning may drop a link of the put page that Apply kept, so the version may differ.)
	putHash := p.Hash
	ingestSite(t, src, dir, nil)
	ix = load(t, dir)
	if diff := cmp.Diff(edited, urlsOf(ix)); diff != "" {
		t.Errorf("pages after the re-ingest (-want +got):\n%s", diff)
	}
	if p, ok := ix.PageByURL(put.URL); !ok || p.Hash != putHash {
		t.Errorf("the put page changed in the re-ingest: %+v", p)
	}

	saved, _ = LoadEdits(dir)
	if !saved.Forget(siteBase+"physics/") || saved.Forget(siteBase+"physics/") {
		t.Fatal("Forget must report the edit once")
	}
	if err := SaveEdits(dir, saved); err != nil {
		t.Fatal(err)
	}
	ingestSite(t, src, dir, nil)
	if _, ok := load(t, dir).PageByURL(siteBase + "physics/"); !ok {
		t.Error("a forgotten delete must let the next ingest bring the page back")
	}
}

func TestPutMarkdownAndCheckPut(t *testing.T) {
	src := writeSite(t, t.TempDir(), smallSite())
	dir := filepath.Join(t.TempDir(), "ix")
	ingestSite(t, src, dir, nil)
	md := PutPage{URL: siteBase + "notes/", Markdown: "# Opening hours\n\nThe help desk opens at 7:15 on Saturdays.\n"}
	if err := CheckPut(dir, md); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []PutPage{{URL: siteBase + "x/", Markdown: " \n "}, {URL: siteBase + "y/", HTML: "<html><body><nav>menu</nav></body></html>"}} {
		if err := CheckPut(dir, bad); !errors.Is(err, ErrNoContent) {
			t.Errorf("CheckPut(%+v) = %v, want ErrNoContent", bad, err)
		}
	}
	e := &Edits{}
	e.PutPage(md)
	apply(t, dir, e)
	p, ok := load(t, dir).PageByURL(md.URL)
	if !ok || p.Title != "Opening hours" || len(p.Links) != 0 {
		t.Fatalf("markdown page: %+v, %v", p, ok)
	}
	md.Title = "Help desk"
	e.PutPage(md)
	apply(t, dir, e)
	if p, _ := load(t, dir).PageByURL(md.URL); p.Title != "Help desk" {
		t.Errorf("a put title must replace the heading: %q", p.Title)
	}
}

func TestApplyNeedsTheIndexModels(t *testing.T) {
	src := writeSite(t, t.TempDir(), smallSite())
	dir := filepath.Join(t.TempDir(), "ix")
	ingestSite(t, src, dir, nil)
	if _, err := Apply(context.Background(), Config{IndexDir: dir, Logger: quiet(), Embedder: fakeEmbedder{}}, &Edits{}); !errors.Is(err, ErrModels) ||
		!strings.Contains(err.Error(), "embedded by") {
		t.Errorf("Apply with another embedder: %v, want an error naming the index's embedder", err)
	}
	if _, err := Apply(context.Background(), Config{IndexDir: t.TempDir(), Logger: quiet()}, &Edits{}); !errors.Is(err, index.ErrNoIndex) {
		t.Errorf("Apply without an index: %v, want ErrNoIndex", err)
	}
}

// fakeEmbedder is an embedder no index of these tests was built with.
type fakeEmbedder struct{}

func (fakeEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i := range out {
		out[i] = []float32{1, 0}
	}
	return out, nil
}
func (fakeEmbedder) Dimension() int { return 2 }
func (fakeEmbedder) Name() string   { return "fake-embedder" }

// TestApplyToCrawledIndex puts a page that the crawled site links to but does not serve: the new version links to
// it from the pages whose crawl saw the link, keeps the crawl record, and the next crawl still asks conditionally.
func TestApplyToCrawledIndex(t *testing.T) {
	s := newLoopbackSite(t, recrawlSite())
	s.set("/chemistry/", page("Chemistry", "chemistry", "/", "/physics/", "/geology/"))
	dir := filepath.Join(t.TempDir(), "ix")
	crawlIngest(t, s, dir)
	prev := load(t, dir)
	geology := s.srv.URL + "/geology/"
	if _, ok := prev.PageByURL(geology); ok {
		t.Fatal("the site does not serve /geology/")
	}

	e := &Edits{}
	e.PutPage(PutPage{URL: geology, Markdown: "# Geology\n\nRocks, minerals and the field trips of the geology course."})
	rep := apply(t, dir, e)
	ix := load(t, dir)
	if !slices.Contains(linksOf(ix, s.srv.URL+"/chemistry/"), geology) {
		t.Errorf("chemistry/ links to %v, want the put page among them", linksOf(ix, s.srv.URL+"/chemistry/"))
	}
	if ix.Crawl == nil || !cmp.Equal(prev.Crawl.Refreshes, ix.Crawl.Refreshes) || len(ix.Crawl.URLs) < len(prev.Crawl.URLs) {
		t.Fatalf("the crawl record was not carried over: %+v", ix.Crawl)
	}
	if rep.Reused != rep.Pages-1 {
		t.Errorf("apply reused %d of %d pages, want all but the put one", rep.Reused, rep.Pages)
	}

	s.pageLog()
	again := crawlIngest(t, s, dir)
	if again.NotModified == 0 {
		t.Errorf("the crawl after Apply asked nothing conditionally: %+v", again)
	}
	if _, ok := load(t, dir).PageByURL(geology); !ok {
		t.Error("the re-crawl lost the put page")
	}
}

// TestApplyKeepsFAQ checks that Apply keeps the FAQ entries of the pages it reuses and extracts those of a put
// HTML page.
func TestApplyKeepsFAQ(t *testing.T) {
	files := smallSite()
	files["admissions/index.html"] = strings.Replace(page("Admissions help", "admissions"), "</main>",
		`<h2>Frequently asked questions</h2><details><summary>When are acceptance letters sent?</summary>`+
			`<p>Letters go out by March 31.</p></details></main>`, 1)
	src, dir := writeSite(t, t.TempDir(), files), filepath.Join(t.TempDir(), "ix")
	ingestSite(t, src, dir, nil)
	before, _ := load(t, dir).PageByURL(siteBase + "admissions/")
	if len(before.FAQ) == 0 {
		t.Fatal("the admissions page has no FAQ entries to keep")
	}
	e := &Edits{}
	e.PutPage(PutPage{URL: siteBase + "housing/", HTML: strings.Replace(page("Housing help", "housing"), "</main>",
		`<h2>FAQ</h2><details><summary>Can first-year students bring a car?</summary><p>Only with a permit.</p></details></main>`, 1)})
	apply(t, dir, e)
	ix := load(t, dir)
	after, _ := ix.PageByURL(siteBase + "admissions/")
	if diff := cmp.Diff(before.FAQ, after.FAQ); diff != "" {
		t.Errorf("a reused page's FAQ (-want +got):\n%s", diff)
	}
	put, _ := ix.PageByURL(siteBase + "housing/")
	if len(put.FAQ) != 1 || put.FAQ[0].Answer != "Only with a permit." {
		t.Errorf("the put page's FAQ: %+v", put.FAQ)
	}
}

// TestMultilingualSiteEmbedder ingests a site with pages in German beside English ones: the local embedder reads
// the site's languages and says so in its name, an English site's embedder keeps the name it always had, and
// edits keep the pages' languages (applying none leaves the version as it was).
func TestMultilingualSiteEmbedder(t *testing.T) {
	site := smallSite()
	for _, p := range []string{"physik", "chemie", "biologie"} {
		site[p+"/index.html"] = strings.Replace(page(p, p, "/"), "<html>", `<html lang="de">`, 1)
	}
	dir := filepath.Join(t.TempDir(), "ix")
	first := ingestSite(t, writeSite(t, t.TempDir(), site), dir, nil)
	ix := load(t, dir)
	if want := embedding.NewLocal(embedding.LocalConfig{Languages: []string{"en", "de"}}).Name(); ix.Manifest.Embedder != want {
		t.Errorf("embedder %q, want %q", ix.Manifest.Embedder, want)
	}
	if rep := apply(t, dir, &Edits{}); rep.Changed || rep.Version != first.Version {
		t.Errorf("applying no edits changed the multilingual version: %+v (first %s)", rep, first.Version)
	}
	// A put page has its own language, and the others keep theirs.
	edits := &Edits{}
	edits.PutPage(PutPage{URL: siteBase + "sternwarte/", Edit: Edit{At: time.Now().UTC()},
		HTML: strings.Replace(page("Sternwarte", "astronomie", "/"), "<html>", `<html lang="de">`, 1)})
	rep := apply(t, dir, edits)
	after := load(t, dir)
	if p, ok := after.PageByURL(siteBase + "sternwarte/"); !ok || p.Lang != "de" {
		t.Errorf("the put page's language: %+v", p)
	}
	if p, ok := after.PageByURL(siteBase + "physik/"); !ok || p.Lang != "de" {
		t.Errorf("a kept page's language: %+v", p)
	}
	// Four pages in each language now: the main language, first in the embedder's name, is the first in
	// alphabetical order.
	if want := embedding.NewLocal(embedding.LocalConfig{Languages: []string{"de", "en"}}).Name(); !rep.Changed || after.Manifest.Embedder != want {
		t.Errorf("a put page on the multilingual index: embedder %q, want %q (%+v)", after.Manifest.Embedder, want, rep)
	}

	english := filepath.Join(t.TempDir(), "ix")
	ingestSite(t, writeSite(t, t.TempDir(), smallSite()), english, nil)
	if got, want := load(t, english).Manifest.Embedder, embedding.NewLocal(embedding.LocalConfig{}).Name(); got != want {
		t.Errorf("an English site's embedder is %q, want %q", got, want)
	}
}
