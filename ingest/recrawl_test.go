package ingest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/ragproxy/ragproxy/ingest/chunk"
	"github.com/ragproxy/ragproxy/ingest/crawl"
)

// served is one request a loopbackSite answered.
type served struct {
	path        string
	conditional bool
	status      int
}

// loopbackSite serves fixed pages with an ETag derived from the body and a fixed Last-Modified, answering
// conditional requests through http.ServeContent (RFC 9110 section 13), and logs every request. Bodies may hold
// {{base}} for the server's URL.
type loopbackSite struct {
	srv   *httptest.Server
	mu    sync.Mutex
	pages map[string]string
	log   []served
}

func newLoopbackSite(t *testing.T, pages map[string]string) *loopbackSite {
	t.Helper()
	s := &loopbackSite{pages: pages}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := r.URL.Path
		if r.URL.RawQuery != "" {
			key += "?" + r.URL.RawQuery
		}
		s.mu.Lock()
		body, ok := s.pages[key]
		s.mu.Unlock()
		status := http.StatusOK
		defer func() {
			s.mu.Lock()
			s.log = append(s.log, served{key, r.Header.Get("If-None-Match") != "" || r.Header.Get("If-Modified-Since") != "", status})
			s.mu.Unlock()
		}()
		if !ok {
			status = http.StatusNotFound
			http.NotFound(w, r)
			return
		}
		body = strings.ReplaceAll(body, "{{base}}", s.srv.URL)
		sum := sha256.Sum256([]byte(body))
		w.Header().Set("ETag", `"`+hex.EncodeToString(sum[:8])+`"`)
		switch {
		case strings.HasSuffix(key, ".xml"):
			w.Header().Set("Content-Type", "application/xml")
		case strings.HasSuffix(key, ".txt"):
			w.Header().Set("Content-Type", "text/plain")
		default:
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
		}
		sw := &statusWriter{ResponseWriter: w, status: &status}
		http.ServeContent(sw, r, "", time.Date(2026, 1, 10, 8, 0, 0, 0, time.UTC), strings.NewReader(body))
	}))
	t.Cleanup(s.srv.Close)
	return s
}

type statusWriter struct {
	http.ResponseWriter
	status *int
}

func (w *statusWriter) WriteHeader(code int) {
	*w.status = code
	w.ResponseWriter.WriteHeader(code)
}

func (s *loopbackSite) set(path, body string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pages[path] = body
}

// pageLog returns the page requests since the last call (robots.txt and the sitemap left out).
func (s *loopbackSite) pageLog() []served {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []served
	for _, r := range s.log {
		if r.path != "/robots.txt" && r.path != "/sitemap.xml" {
			out = append(out, r)
		}
	}
	s.log = nil
	return out
}

// recrawlSite has a sitemap listing a page no link reaches, an absolute same-host link, a meta refresh and a
// print view that names its canonical URL.
func recrawlSite() map[string]string {
	return map[string]string{
		"/robots.txt": "User-agent: *\nDisallow: /private/\nSitemap: {{base}}/sitemap.xml\n",
		"/sitemap.xml": `<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
<url><loc>{{base}}/history/</loc><lastmod>2026-01-02</lastmod></url><url><loc>{{base}}/physics/</loc></url></urlset>`,
		"/":           page("Home", "welcome", "/physics/", "/chemistry/", "/old-biology/", "/print/?p=maths"),
		"/physics/":   page("Physics", "physics", "/chemistry/", "/", "{{base}}/astronomy/"),
		"/astronomy/": page("Astronomy", "astronomy", "/physics/"),
		"/chemistry/": page("Chemistry", "chemistry", "/", "/physics/"),
		"/old-biology/": `<html><head><meta http-equiv="refresh" content="0; url=/biology/"></head>` +
			`<body>This page has moved.</body></html>`,
		"/biology/": page("Biology", "biology", "/", "/chemistry/"),
		"/print/?p=maths": strings.Replace(page("Mathematics", "mathematics", "/"), "</head>",
			`<link rel="canonical" href="{{base}}/maths/"></head>`, 1),
		"/history/": page("History", "history", "/"),
		"/about/":   page("About", "institution", "/"), // in every page's navigation
	}
}

// snapshot lists every file under dir with its size and modification time.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		out[p] = info.ModTime().Format(time.RFC3339Nano) + " " + info.Name()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func crawlIngest(t *testing.T, s *loopbackSite, dir string) *Report {
	t.Helper()
	rep, err := Run(context.Background(), Config{Source: s.srv.URL + "/", IndexDir: dir, Logger: quiet(),
		Crawl: crawl.Config{AllowPrivate: true, Delay: crawl.NoDelay, HTTPClient: s.srv.Client()}})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return rep
}

func pageURLs(t *testing.T, dir string) []string {
	var urls []string
	for _, p := range load(t, dir).Pages {
		urls = append(urls, p.URL)
	}
	sort.Strings(urls)
	return urls
}

func TestUnchangedRecrawlIsConditional(t *testing.T) {
	s := newLoopbackSite(t, recrawlSite())
	dir := filepath.Join(t.TempDir(), "ix")
	first := crawlIngest(t, s, dir)
	base := s.srv.URL
	want := []string{base + "/", base + "/about/", base + "/astronomy/", base + "/biology/", base + "/chemistry/", base + "/history/",
		base + "/maths/", base + "/physics/"}
	if diff := cmp.Diff(want, pageURLs(t, dir)); diff != "" {
		t.Fatalf("indexed pages (-want +got):\n%s", diff)
	}
	ix := load(t, dir)
	if ix.Crawl == nil || len(ix.Crawl.Links) != len(ix.Pages) || len(ix.Crawl.Refreshes) != 1 {
		t.Fatalf("crawl record %+v for %d pages; want every page's links and the meta refresh", ix.Crawl, len(ix.Pages))
	}
	if p, _ := ix.PageByURL(base + "/maths/"); p.Source != base+"/print/?p=maths" || p.ETag == "" || p.Fetched.IsZero() {
		t.Errorf("canonical page: source %q, ETag %q, fetched %v", p.Source, p.ETag, p.Fetched)
	}
	asked := map[string]bool{}
	for _, r := range s.pageLog() {
		asked[r.path] = true
		if r.conditional {
			t.Errorf("first crawl asked %s conditionally", r.path)
		}
	}
	before := snapshot(t, dir)

	second := crawlIngest(t, s, dir)
	if second.Changed || second.Version != first.Version || second.Reused != second.Pages || second.Embedded != 0 ||
		second.NotModified != second.Fetched || second.Pages != first.Pages {
		t.Errorf("unchanged re-crawl: %+v\nfirst: %+v", second, first)
	}
	again := map[string]bool{}
	for _, r := range s.pageLog() {
		again[r.path] = true
		if !r.conditional || r.status != http.StatusNotModified {
			t.Errorf("re-crawl request %s: conditional %v, status %d; want conditional and 304", r.path, r.conditional, r.status)
		}
	}
	// Every page, the meta refresh and the print view, as in the first crawl.
	if diff := cmp.Diff(asked, again); diff != "" || len(again) != len(want)+1 {
		t.Errorf("re-crawl asked other URLs than the first crawl (-first +again):\n%s", diff)
	}
	if second.FetchedBytes >= first.FetchedBytes/4 {
		t.Errorf("re-crawl read %d body bytes, the first crawl %d", second.FetchedBytes, first.FetchedBytes)
	}
	if diff := cmp.Diff(before, snapshot(t, dir)); diff != "" {
		t.Errorf("the unchanged re-crawl rewrote the index (-before +after):\n%s", diff)
	}
}

func TestRecrawlReindexesChangedPage(t *testing.T) {
	s := newLoopbackSite(t, recrawlSite())
	dir := filepath.Join(t.TempDir(), "ix")
	first := crawlIngest(t, s, dir)
	s.pageLog()

	// Chemistry changes (so its ETag does) and links to a new page.
	s.set("/chemistry/", page("Chemistry", "spectroscopy", "/", "/physics/", "/geology/"))
	s.set("/geology/", page("Geology", "geology", "/"))
	rep := crawlIngest(t, s, dir)
	if !rep.Changed || rep.Version == first.Version || rep.Pages != first.Pages+1 || rep.Reused != first.Pages-1 {
		t.Errorf("after a change: %+v\nfirst: %+v", rep, first)
	}
	base := s.srv.URL
	ix := load(t, dir)
	chem, ok := ix.PageByURL(base + "/chemistry/")
	if !ok || !strings.Contains(chem.Markdown, "spectroscopy") {
		t.Fatalf("the changed page was not re-indexed: %v %q", ok, chem.Markdown)
	}
	if _, ok := ix.PageByURL(base + "/geology/"); !ok {
		t.Error("the page the changed one links to was not crawled")
	}
	status := map[string]int{}
	for _, r := range s.pageLog() {
		status[r.path] = r.status
	}
	if status["/chemistry/"] != http.StatusOK || status["/geology/"] != http.StatusOK || status["/physics/"] != http.StatusNotModified {
		t.Errorf("statuses %v: want the changed and the new page fetched, the others 304", status)
	}

	// The next crawl asks the changed page with its new validators.
	again := crawlIngest(t, s, dir)
	if again.Changed || again.NotModified != again.Fetched {
		t.Errorf("re-crawl after re-indexing: %+v", again)
	}
}

func TestRecrawlAfterSettingsChangeFetchesInFull(t *testing.T) {
	s := newLoopbackSite(t, recrawlSite())
	dir := filepath.Join(t.TempDir(), "ix")
	crawlIngest(t, s, dir)
	s.pageLog()
	// Other cleaning settings: the previous markdown cannot be reused, so a 304 would leave nothing to clean.
	rep, err := Run(context.Background(), Config{Source: s.srv.URL + "/", IndexDir: dir, Logger: quiet(),
		Chunk: chunk.Config{MaxTokens: 900},
		Crawl: crawl.Config{AllowPrivate: true, Delay: crawl.NoDelay, HTTPClient: s.srv.Client()}})
	if err != nil {
		t.Fatal(err)
	}
	if rep.NotModified != 0 || rep.Reused != 0 {
		t.Errorf("report %+v: want every page fetched and rebuilt", rep)
	}
	for _, r := range s.pageLog() {
		if r.conditional {
			t.Errorf("asked %s conditionally although no page can be reused", r.path)
		}
	}
}
