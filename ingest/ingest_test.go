package ingest

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/ragproxy/ragproxy/index"
	"github.com/ragproxy/ragproxy/ingest/crawl"
)

const siteBase = "http://site.test/"

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// page renders a small HTML page with site chrome, a main section of a few paragraphs about topic, and links.
func page(title, topic string, links ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "<html><head><title>%s | Example Site</title></head><body>", title)
	b.WriteString(`<nav><a href="/">Home</a> <a href="/about/">About the site menu</a></nav><main>`)
	fmt.Fprintf(&b, "<h1>%s</h1>", title)
	for i := range 4 {
		fmt.Fprintf(&b, "<h2>%s part %d</h2><p>The %s programme covers %s methods, %s history and %s practice "+
			"in section %d, with seminars, laboratory work and a final project supervised by the faculty.</p>",
			topic, i+1, topic, topic, topic, topic, i+1)
	}
	for _, l := range links {
		fmt.Fprintf(&b, `<p><a href="%s">See also %s</a></p>`, l, strings.Trim(l, "/"))
	}
	b.WriteString("</main><footer>Copyright Example Site</footer></body></html>")
	return b.String()
}

// writeSite writes files (path relative to dir: content) and returns dir.
func writeSite(t *testing.T, dir string, files map[string]string) string {
	t.Helper()
	for p, body := range files {
		f := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func smallSite() map[string]string {
	return map[string]string{
		"index.html":           page("Home", "welcome", "/physics/", "/chemistry/", "/biology/"),
		"physics/index.html":   page("Physics", "physics", "/chemistry/", "/"),
		"chemistry/index.html": page("Chemistry", "chemistry", "/biology/", "/"),
		"biology/index.html":   page("Biology", "biology", "/physics/", "/"),
	}
}

func ingestSite(t *testing.T, src, dir string, mod func(*Config)) *Report {
	t.Helper()
	cfg := Config{Source: src, BaseURL: siteBase, IndexDir: dir, Logger: quiet()}
	if mod != nil {
		mod(&cfg)
	}
	rep, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return rep
}

func load(t *testing.T, dir string) *index.Index {
	t.Helper()
	ix, err := index.Load(dir)
	if err != nil {
		t.Fatalf("index.Load: %v", err)
	}
	return ix
}

// chunkState is what a page's chunks look like in an index: texts and their vectors.
type chunkState struct {
	Texts   []string
	Vectors [][]float32
}

func chunksOf(ix *index.Index, url string) chunkState {
	var s chunkState
	p, ok := ix.PageByURL(url)
	if !ok {
		return s
	}
	for _, id := range p.Chunks {
		s.Texts = append(s.Texts, ix.Chunks[id].Text)
		s.Vectors = append(s.Vectors, ix.ChunkVectors[id])
	}
	return s
}

func TestIncrementalReingest(t *testing.T) {
	files := smallSite()
	src := writeSite(t, t.TempDir(), files)
	dir := filepath.Join(t.TempDir(), "ix")

	first := ingestSite(t, src, dir, nil)
	if first.Pages != 4 || first.Reused != 0 || first.Embedded != first.Pages+first.Chunks || !first.Changed {
		t.Fatalf("first run: %+v", first)
	}
	before := load(t, dir)

	second := ingestSite(t, src, dir, nil)
	if second.Reused != second.Pages || second.Embedded != 0 || second.Version != first.Version || second.Changed ||
		second.Removed != 0 {
		t.Errorf("unchanged re-ingest: %+v, first version %s", second, first.Version)
	}

	// Change one page: only it is chunked and embedded again.
	files["chemistry/index.html"] = page("Chemistry", "spectroscopy", "/biology/", "/")
	writeSite(t, src, files)
	third := ingestSite(t, src, dir, nil)
	after := load(t, dir)
	changed := chunksOf(after, siteBase+"chemistry/")
	if third.Reused != third.Pages-1 || third.Version == first.Version || !third.Changed {
		t.Errorf("after changing one page: %+v", third)
	}
	// Summaries are corpus-level (key terms), so each may be embedded again; chunks of the other pages may not.
	if third.Embedded < len(changed.Texts) || third.Embedded > len(changed.Texts)+third.Pages {
		t.Errorf("embedded %d texts; the changed page has %d chunks of %d pages", third.Embedded, len(changed.Texts),
			third.Pages)
	}
	if !strings.Contains(strings.Join(changed.Texts, "\n"), "spectroscopy") {
		t.Errorf("changed page's chunks lack the new text: %q", changed.Texts)
	}
	for _, u := range []string{siteBase, siteBase + "physics/", siteBase + "biology/"} {
		if diff := cmp.Diff(chunksOf(before, u), chunksOf(after, u)); diff != "" {
			t.Errorf("unchanged page %s: chunks differ (-before +after):\n%s", u, diff)
		}
	}

	// Delete a page: it is removed, and so are links to it.
	if err := os.RemoveAll(filepath.Join(src, "biology")); err != nil {
		t.Fatal(err)
	}
	fourth := ingestSite(t, src, dir, nil)
	final := load(t, dir)
	if fourth.Removed != 1 || fourth.Pages != 3 || len(final.Pages) != 3 {
		t.Errorf("after deleting a page: %+v, %d pages loaded", fourth, len(final.Pages))
	}
	if _, ok := final.PageByURL(siteBase + "biology/"); ok {
		t.Error("the deleted page is still in the index")
	}
	if _, ok := final.Manifest.Hashes[siteBase+"biology/"]; ok {
		t.Error("the deleted page is still in the manifest")
	}
}

func TestBadInputIsSkippedAndCounted(t *testing.T) {
	files := smallSite()
	files["empty.html"] = ""
	files["scripts-only/index.html"] = "<html><head><title>x</title><script>var a = 1;</script></head><body><nav>Menu</nav></body></html>"
	files["broken.pdf"] = "this is not a PDF"
	files["notes.txt"] = "plain text is not a page"
	files["data/export.csv"] = "a,b\n1,2\n"
	src := writeSite(t, t.TempDir(), files)
	dir := filepath.Join(t.TempDir(), "ix")

	rep := ingestSite(t, src, dir, nil)
	if rep.Pages != 4 || rep.Unreadable != 3 || rep.Skipped[crawl.SkipContentType] != 2 {
		t.Errorf("report %+v: want 4 pages, 3 unreadable, 2 skipped as not HTML/PDF", rep)
	}
	ix := load(t, dir)
	var urls []string
	for _, p := range ix.Pages {
		urls = append(urls, p.URL)
	}
	want := []string{siteBase, siteBase + "biology/", siteBase + "chemistry/", siteBase + "physics/"}
	if diff := cmp.Diff(want, urls); diff != "" {
		t.Errorf("indexed pages (-want +got):\n%s", diff)
	}
}

func TestNoUsablePagesFails(t *testing.T) {
	src := writeSite(t, t.TempDir(), map[string]string{"empty.html": "", "notes.txt": "x"})
	_, err := Run(context.Background(), Config{Source: src, BaseURL: siteBase, IndexDir: filepath.Join(t.TempDir(), "ix"),
		Logger: quiet()})
	if err == nil || !strings.Contains(err.Error(), ErrNoPages.Error()) {
		t.Errorf("Run on a site without pages: err = %v, want %v", err, ErrNoPages)
	}
}

func TestMenuTextIsRemoved(t *testing.T) {
	src := writeSite(t, t.TempDir(), smallSite())
	dir := filepath.Join(t.TempDir(), "ix")
	ingestSite(t, src, dir, nil)
	for _, p := range load(t, dir).Pages {
		if strings.Contains(p.Markdown, "About the site menu") || strings.Contains(p.Markdown, "Copyright") {
			t.Errorf("page %s keeps navigation or footer text:\n%s", p.URL, p.Markdown)
		}
		if !strings.Contains(p.Markdown, "final project supervised") {
			t.Errorf("page %s lost its content:\n%s", p.URL, p.Markdown)
		}
	}
}

// textEmbedder is a configured (not local) embedder whose vector says which text it embeds: its length and its
// first byte. It counts the texts it is asked for.
type textEmbedder struct{ texts *int }

func (e textEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	*e.texts += len(texts)
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = []float32{float32(len(t)), float32(t[0]), 1}
	}
	return out, nil
}
func (textEmbedder) Dimension() int { return 3 }
func (textEmbedder) Name() string   { return "text-embedder" }

// TestConfiguredEmbedder ingests with an embedder of the caller's (as an upstream model is): every chunk gets the
// vector of its search text, and a re-ingest after one page changed embeds only that page's chunks, the others
// keeping theirs.
func TestConfiguredEmbedder(t *testing.T) {
	files := smallSite()
	src := writeSite(t, t.TempDir(), files)
	dir := t.TempDir()
	calls := 0
	withEmbedder := func(c *Config) { c.Embedder = textEmbedder{&calls} }
	ingestSite(t, src, dir, withEmbedder)
	ix := load(t, dir)
	check := func(ix *index.Index) {
		t.Helper()
		texts, err := index.ChunkSearchTexts(ix)
		if err != nil {
			t.Fatal(err)
		}
		for i, text := range texts {
			if want := []float32{float32(len(text)), float32(text[0]), 1}; !cmp.Equal(ix.ChunkVectors[i], want) {
				t.Errorf("chunk %d vector %v, want %v (its search text's)", i, ix.ChunkVectors[i], want)
			}
		}
	}
	check(ix)
	if want := len(ix.Pages) + len(ix.Chunks); calls != want {
		t.Errorf("first build embedded %d texts, want %d", calls, want)
	}

	writeSite(t, src, map[string]string{"physics/index.html": page("Physics", "astrophysics", "/chemistry/", "/")})
	calls = 0
	ingestSite(t, src, dir, withEmbedder)
	after := load(t, dir)
	check(after)
	physics, _ := after.PageByURL(siteBase + "physics/")
	if want := 1 + len(physics.Chunks); calls != want {
		t.Errorf("re-ingest embedded %d texts, want %d (the changed page's summary and chunks)", calls, want)
	}
}

// templatePage is a page of a site whose template marks nothing as chrome: no main element, a plain div for
// the footer (when footer is set).
func templatePage(i int, footer bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "<html><head><title>Topic %d</title></head><body><div class=\"row\"><h1>Topic %d</h1>", i, i)
	fmt.Fprintf(&b, "<p>Topic %d is about subject number %d: its rules, its forms and its deadlines, which the "+
		"office publishes every term.</p></div>", i, i)
	if footer {
		b.WriteString(`<div class="row"><p>Copyright 2026, The Example Foundation. Example® and the Example logo ` +
			`are trademarks of The Example Foundation.</p></div>`)
	}
	b.WriteString("</body></html>")
	return b.String()
}

func TestSiteTemplateLeftOutOfChunks(t *testing.T) {
	files := map[string]string{}
	for i := range 12 {
		files[fmt.Sprintf("topic%d.html", i)] = templatePage(i, true)
	}
	src := writeSite(t, t.TempDir(), files)
	dir := filepath.Join(t.TempDir(), "ix")
	inChunks := func(ix *index.Index) (n int) {
		for _, c := range ix.Chunks {
			if strings.Contains(c.Text, "trademarks") {
				n++
			}
		}
		return n
	}

	first := ingestSite(t, src, dir, nil)
	ix := load(t, dir)
	if n := inChunks(ix); n != 0 || ix.Manifest.Boilerplate == "" {
		t.Errorf("the footer every page closes with is in %d chunks (template key %q), want none", n, ix.Manifest.Boilerplate)
	}
	if md, _ := ix.PageMarkdown(0); !strings.Contains(md, "trademarks") {
		t.Error("the page's markdown lost the footer; only its chunks should")
	}
	if second := ingestSite(t, src, dir, nil); second.Reused != second.Pages || second.Version != first.Version {
		t.Errorf("unchanged re-ingest: %+v, first version %s", second, first.Version)
	}

	// Seven pages drop the footer: on five of twelve it is no longer the template, and the five unchanged
	// pages are split again so that their chunks hold it.
	for i := range 7 {
		files[fmt.Sprintf("topic%d.html", i)] = templatePage(i, false)
	}
	writeSite(t, src, files)
	third := ingestSite(t, src, dir, nil)
	ix = load(t, dir)
	if n := inChunks(ix); n != 5 || ix.Manifest.Boilerplate != "" || third.Reused != 0 {
		t.Errorf("footer on 5 of 12 pages: in %d chunks (template key %q, %d pages reused), want 5 (\"\", 0)", n,
			ix.Manifest.Boilerplate, third.Reused)
	}
}
