package crawl

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// staticPage is one resource of a revisitSite.
type staticPage struct {
	ctype, body string
	etag        string    // "" sends no ETag
	modified    time.Time // zero sends no Last-Modified
	gzip        bool      // the body is sent gzipped (a .xml.gz sitemap)
}

// request is what a revisitSite saw of one request.
type request struct {
	path        string
	conditional bool // If-None-Match or If-Modified-Since was sent
	status      int
}

// revisitSite is a static site that answers conditional requests as RFC 9110 asks (through http.ServeContent)
// and logs every request. Bodies may use {{base}} for the server's own URL.
type revisitSite struct {
	srv   *httptest.Server
	mu    sync.Mutex
	pages map[string]staticPage
	log   []request
}

func newRevisitSite(t *testing.T, pages map[string]staticPage) *revisitSite {
	t.Helper()
	s := &revisitSite{pages: pages}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *revisitSite) serve(w http.ResponseWriter, r *http.Request) {
	key := r.URL.Path
	if r.URL.RawQuery != "" {
		key += "?" + r.URL.RawQuery
	}
	s.mu.Lock()
	p, ok := s.pages[key]
	s.mu.Unlock()
	rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
	defer func() {
		s.mu.Lock()
		s.log = append(s.log, request{path: key, status: rec.status,
			conditional: r.Header.Get("If-None-Match") != "" || r.Header.Get("If-Modified-Since") != ""})
		s.mu.Unlock()
	}()
	if !ok {
		http.NotFound(rec, r)
		return
	}
	if p.ctype != "" {
		rec.Header().Set("Content-Type", p.ctype)
	}
	if p.etag != "" {
		rec.Header().Set("ETag", p.etag)
	}
	body := strings.ReplaceAll(p.body, "{{base}}", s.srv.URL)
	if p.gzip {
		body = gzipped(body)
	}
	http.ServeContent(rec, r, "", p.modified, strings.NewReader(body))
}

func (s *revisitSite) set(path string, p staticPage) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pages[path] = p
}

// takeLog returns the requests logged so far and clears the log.
func (s *revisitSite) takeLog() []request {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.log
	s.log = nil
	return l
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) {
	r.status = code
	r.ResponseWriter.WriteHeader(code)
}

func gzipped(s string) string {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write([]byte(s)) // a bytes.Buffer does not fail
	zw.Close()
	return b.String()
}

var modified = time.Date(2026, 1, 10, 8, 0, 0, 0, time.UTC)

func htmlDoc(etag, body string) staticPage {
	return staticPage{ctype: "text/html; charset=utf-8", etag: etag, modified: modified,
		body: "<!doctype html><html><head><title>t</title></head><body>" + body + "</body></html>"}
}

// fixtureSite has a robots.txt naming a sitemap index (whose sitemap is gzipped) besides /sitemap.xml, pages
// that only the sitemaps list, an absolute same-host link, a meta refresh, a print view naming its canonical, a
// page with a Last-Modified but no ETag, and a PDF.
func fixtureSite(t *testing.T) *revisitSite {
	return newRevisitSite(t, map[string]staticPage{
		"/robots.txt": {ctype: "text/plain", body: "User-agent: *\nDisallow: /private/\nSitemap: {{base}}/maps/index.xml\nSitemap: http://elsewhere.invalid/sitemap.xml\n"},
		"/sitemap.xml": {ctype: "application/xml", body: `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <url><loc>{{base}}/orphan/</loc><lastmod>2026-01-01</lastmod></url>
  <url><loc>{{base}}/private/x/</loc></url>
  <url><loc>http://elsewhere.invalid/page/</loc></url>
  <url><loc>{{base}}/a/</loc><lastmod>2026-01-05T10:00:00+01:00</lastmod></url>
</urlset>`},
		"/maps/index.xml": {ctype: "application/xml", body: `<?xml version="1.0" encoding="UTF-8"?>
<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <sitemap><loc>{{base}}/maps/pages.xml.gz</loc></sitemap>
</sitemapindex>`},
		"/maps/pages.xml.gz": {ctype: "application/gzip", gzip: true, body: `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>{{base}}/zipped/</loc></url></urlset>`},
		"/":                  htmlDoc(`"root1"`, `<a href="/a/">a</a> <a href="{{base}}/abs/">absolute</a> <a href="/old/">old</a> <a href="/b/?print=1">print</a> <a href="/doc.pdf">pdf</a> <a href="http://elsewhere.invalid/x/">off</a>`),
		"/a/":                htmlDoc(`"a1"`, `<a href="/">home</a> <a href="/dated/">dated</a>`),
		"/abs/":              htmlDoc(`W/"abs1"`, `<p>reached through an absolute link</p>`),
		"/old/": {ctype: "text/html", etag: `"old1"`, modified: modified,
			body: `<html><head><meta http-equiv="Refresh" content="0; URL='/new/'"></head><body>moved</body></html>`},
		"/new/": htmlDoc(`"new1"`, `<p>the new home of old</p>`),
		"/b/?print=1": {ctype: "text/html", etag: `"b1"`, modified: modified,
			body: `<html><head><link rel="canonical" href="{{base}}/b/"></head><body><a href="/a/">a</a></body></html>`},
		"/dated/":     {ctype: "text/html", modified: modified, body: `<p>Last-Modified only</p>`},
		"/orphan/":    htmlDoc(`"orphan1"`, `<p>only the sitemap lists me</p>`),
		"/zipped/":    htmlDoc(`"zipped1"`, `<p>only the gzipped sitemap lists me</p>`),
		"/private/x/": htmlDoc(`"p1"`, `secret`),
		"/doc.pdf":    {ctype: "application/pdf", etag: `"pdf1"`, modified: modified, body: "%PDF-1.4\n%%EOF\n"},
	})
}

// crawlSite crawls s and returns the pages by path.
func crawlSite(t *testing.T, s *revisitSite, mod func(*Config)) (map[string]Page, Stats) {
	t.Helper()
	cfg := Config{Start: s.srv.URL + "/", AllowPrivate: true, Delay: NoDelay, HTTPClient: s.srv.Client()}
	if mod != nil {
		mod(&cfg)
	}
	pages := map[string]Page{}
	stats, err := Crawl(context.Background(), cfg, func(p Page) {
		key := pathOf(p.URL)
		if _, dup := pages[key]; dup {
			t.Errorf("page %s emitted twice", p.URL)
		}
		pages[key] = p
	})
	if err != nil {
		t.Fatalf("Crawl: %v", err)
	}
	return pages, stats
}

// previousOf is what a caller keeps of a crawl for the next one: each page under the URL that answered, and the
// meta refreshes passed on the way.
func previousOf(pages map[string]Page) map[string]Revisit {
	prev := map[string]Revisit{}
	for _, p := range pages {
		at := p.URL
		if p.Source != "" {
			at = p.Source
		}
		prev[at] = Revisit{Page: p.URL, ETag: p.ETag, LastModified: p.LastModified, Fetched: p.Fetched, Links: p.Links}
		for _, r := range p.Refreshes {
			prev[r.URL] = Revisit{Refresh: r.Target, ETag: r.ETag, LastModified: r.LastModified, Fetched: r.Fetched}
		}
	}
	return prev
}

// pageRequests drops robots.txt and sitemaps from a request log.
func pageRequests(log []request) []request {
	var out []request
	for _, r := range log {
		if r.path != "/robots.txt" && r.path != "/sitemap.xml" && !strings.HasPrefix(r.path, "/maps/") {
			out = append(out, r)
		}
	}
	return out
}

func TestCrawlSitemapsRefreshAndCanonical(t *testing.T) {
	s := fixtureSite(t)
	pages, stats := crawlSite(t, s, nil)
	want := []string{"/", "/a/", "/abs/", "/b/", "/dated/", "/doc.pdf", "/new/", "/orphan/", "/zipped/"}
	if diff := cmp.Diff(want, paths(pages)); diff != "" {
		t.Errorf("pages (-want +got):\n%s", diff)
	}
	base := s.srv.URL
	if p := pages["/b/"]; p.Source != base+"/b/?print=1" || p.URL != base+"/b/" {
		t.Errorf("print view recorded as %q from %q, want under its canonical /b/ from /b/?print=1", p.URL, p.Source)
	}
	wantRefresh := []Refresh{{URL: base + "/old/", Target: base + "/new/", ETag: `"old1"`,
		LastModified: modified.Format(http.TimeFormat)}}
	if diff := cmp.Diff(wantRefresh, pages["/new/"].Refreshes, cmp.Comparer(func(a, b time.Time) bool { return true })); diff != "" {
		t.Errorf("refreshes on the way to /new/ (-want +got):\n%s", diff)
	}
	if p := pages["/"]; p.ETag != `"root1"` || p.LastModified != modified.Format(http.TimeFormat) || p.Fetched.IsZero() || p.NotModified {
		t.Errorf("root validators = %q, %q, fetched %v, not modified %v", p.ETag, p.LastModified, p.Fetched, p.NotModified)
	}
	if p := pages["/dated/"]; p.ETag != "" || p.LastModified == "" {
		t.Errorf("/dated/ validators = %q, %q; want a Last-Modified only", p.ETag, p.LastModified)
	}
	for _, r := range s.takeLog() {
		if strings.HasPrefix(r.path, "/private/") {
			t.Errorf("requested %s, which robots.txt disallows", r.path)
		}
		if r.conditional {
			t.Errorf("first crawl sent a conditional request for %s", r.path)
		}
	}
	if stats.NotModified != 0 || stats.Requests == 0 || stats.BodyBytes == 0 {
		t.Errorf("stats %+v: want requests and bytes counted, nothing not modified", stats)
	}

	// Without sitemaps only what links reach is crawled.
	linked, _ := crawlSite(t, s, func(c *Config) { c.NoSitemaps = true })
	if diff := cmp.Diff([]string{"/", "/a/", "/abs/", "/b/", "/dated/", "/doc.pdf", "/new/"}, paths(linked)); diff != "" {
		t.Errorf("pages without sitemaps (-want +got):\n%s", diff)
	}
}

func TestRecrawlIsConditional(t *testing.T) {
	s := fixtureSite(t)
	first, _ := crawlSite(t, s, nil)
	s.takeLog()
	prev := previousOf(first)

	again, stats := crawlSite(t, s, func(c *Config) { c.Previous = prev })
	if diff := cmp.Diff(paths(first), paths(again)); diff != "" {
		t.Errorf("re-crawl found other pages (-first +again):\n%s", diff)
	}
	for path, p := range again {
		if !p.NotModified || p.Body != nil {
			t.Errorf("page %s: not modified %v, %d body bytes; want a 304 without a body", path, p.NotModified, len(p.Body))
		}
		if diff := cmp.Diff(first[path].Links, p.Links); diff != "" {
			t.Errorf("page %s: links differ from the first crawl (-first +again):\n%s", path, diff)
		}
		if p.URL != first[path].URL || p.Source != first[path].Source {
			t.Errorf("page %s: recorded as %s from %q, first as %s from %q", path, p.URL, p.Source, first[path].URL, first[path].Source)
		}
	}
	if diff := cmp.Diff(first["/new/"].Refreshes, again["/new/"].Refreshes, cmp.Comparer(func(a, b time.Time) bool { return true })); diff != "" {
		t.Errorf("refreshes differ (-first +again):\n%s", diff)
	}
	log := pageRequests(s.takeLog())
	if len(log) == 0 {
		t.Fatal("the re-crawl requested no pages")
	}
	for _, r := range log {
		if !r.conditional || r.status != http.StatusNotModified {
			t.Errorf("re-crawl request %s: conditional %v, status %d; want only conditional requests answered 304", r.path, r.conditional, r.status)
		}
	}
	if stats.NotModified != len(again) {
		t.Errorf("stats count %d not modified of %d pages", stats.NotModified, len(again))
	}
}

func TestRecrawlFetchesChangedPages(t *testing.T) {
	s := fixtureSite(t)
	first, _ := crawlSite(t, s, nil)
	s.takeLog()
	// /a/ changes (new ETag, a new link); /dated/ changes its date only.
	s.set("/a/", htmlDoc(`"a2"`, `<a href="/">home</a> <a href="/dated/">dated</a> <a href="/fresh/">fresh</a>`))
	s.set("/fresh/", htmlDoc(`"fresh1"`, `<p>new page</p>`))
	s.set("/dated/", staticPage{ctype: "text/html", modified: modified.Add(time.Hour), body: `<p>Last-Modified only, changed</p>`})

	again, _ := crawlSite(t, s, func(c *Config) { c.Previous = previousOf(first) })
	for _, path := range []string{"/a/", "/dated/", "/fresh/"} {
		if p := again[path]; p.NotModified || len(p.Body) == 0 {
			t.Errorf("changed page %s: not modified %v, %d body bytes; want it fetched", path, p.NotModified, len(p.Body))
		}
	}
	if got := again["/a/"].ETag; got != `"a2"` {
		t.Errorf("/a/ ETag = %q, want the new one", got)
	}
	if !again["/"].NotModified {
		t.Error("unchanged / was fetched again")
	}
	for _, r := range pageRequests(s.takeLog()) {
		if r.path == "/fresh/" && r.conditional {
			t.Error("the new page was asked conditionally, with validators it never had")
		}
	}
}

func TestTrustLastmod(t *testing.T) {
	s := fixtureSite(t)
	first, _ := crawlSite(t, s, nil)
	s.takeLog()
	prev := previousOf(first)
	tests := []struct {
		name  string
		trust bool
		asked map[string]bool // page -> requested in the re-crawl
	}{
		// /orphan/ and /a/ have sitemap lastmods before the first crawl.
		{"conditional by default", false, map[string]bool{"/orphan/": true, "/a/": true, "/": true}},
		{"trusted lastmod spares the request", true, map[string]bool{"/orphan/": false, "/a/": false, "/": true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			again, _ := crawlSite(t, s, func(c *Config) { c.Previous = prev; c.TrustLastmod = tt.trust })
			if diff := cmp.Diff(paths(first), paths(again)); diff != "" {
				t.Errorf("re-crawl found other pages (-first +again):\n%s", diff)
			}
			asked := map[string]bool{}
			for _, r := range s.takeLog() {
				asked[r.path] = true
			}
			for path, want := range tt.asked {
				if asked[path] != want {
					t.Errorf("%s requested = %v, want %v", path, asked[path], want)
				}
				if !again[path].NotModified {
					t.Errorf("%s not emitted as not modified", path)
				}
			}
		})
	}
	// A lastmod after the earlier fetch never spares the request.
	later := map[string]Revisit{}
	for k, v := range prev {
		v.Fetched = time.Date(2025, 12, 1, 0, 0, 0, 0, time.UTC)
		later[k] = v
	}
	crawlSite(t, s, func(c *Config) { c.Previous = later; c.TrustLastmod = true })
	asked := map[string]bool{}
	for _, r := range s.takeLog() {
		asked[r.path] = true
	}
	if !asked["/orphan/"] || !asked["/a/"] {
		t.Errorf("pages whose lastmod is after the earlier fetch were not requested: %v", asked)
	}
}

func TestRefreshURL(t *testing.T) {
	tests := []struct{ content, want string }{
		{"0; url=/next/", "/next/"},
		{"0;URL='/q/'", "/q/"},
		{`5, url="/d/" trailing`, "/d/"},
		{"  3 ; Url = /spaced/ ", "/spaced/"},
		{"0; /bare/", "/bare/"},
		{"1.5; url=/frac/", "/frac/"},
		{"30", ""},
		{"", ""},
		{"soon; url=/x/", ""},
		{"0x; url=/x/", ""},
	}
	for _, tt := range tests {
		if got := refreshURL(tt.content); got != tt.want {
			t.Errorf("refreshURL(%q) = %q, want %q", tt.content, got, tt.want)
		}
	}
}

func TestHeadHints(t *testing.T) {
	page, _ := url.Parse("http://example.org/dir/page/?v=2")
	tests := []struct {
		name, html         string
		refresh, canonical string
	}{
		{"both", `<html><head><meta http-equiv="refresh" content="0; url=../other/"><link rel="Canonical" href="/dir/page/"></head><body></body></html>`,
			"http://example.org/dir/other/", "http://example.org/dir/page/"},
		{"rel token list and base", `<head><base href="http://example.org/b/"><link rel="alternate canonical" href="c"></head>`,
			"", "http://example.org/b/c/"},
		{"refresh without a URL is a reload", `<head><meta http-equiv="refresh" content="60"></head>`, "", ""},
		{"body is not read", `<head><title>x</title></head><body><link rel="canonical" href="/no/"><meta http-equiv="refresh" content="0; url=/no/">`, "", ""},
		{"no head tags", `<meta http-equiv=refresh content="0;url=/r/"><p>text</p><link rel=canonical href=/late/>`,
			"http://example.org/r/", ""},
		{"not http", `<head><link rel="canonical" href="javascript:void(0)"></head>`, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			refresh, canonical := headHints([]byte(tt.html), page)
			if refresh != tt.refresh || canonical != tt.canonical {
				t.Errorf("headHints = %q, %q; want %q, %q", refresh, canonical, tt.refresh, tt.canonical)
			}
		})
	}
}

func TestParseSitemap(t *testing.T) {
	urlset := `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
<url><loc> http://x/a/ </loc><lastmod>2016-07-28</lastmod><priority>0.8</priority></url>
<url><loc>http://x/b/</loc></url><url><lastmod>2016-01-01</lastmod></url></urlset>`
	index := `<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><sitemap><loc>http://x/s1.xml</loc>
<lastmod>2016-01-01</lastmod></sitemap><sitemap><loc>http://x/s2.xml.gz</loc></sitemap></sitemapindex>`
	tests := []struct {
		name       string
		body       string
		urls       []sitemapEntry
		nested     []string
		wantErrors bool
	}{
		{"urlset", urlset, []sitemapEntry{{"http://x/a/", "2016-07-28"}, {"http://x/b/", ""}}, nil, false},
		{"gzipped urlset", gzipped(urlset), []sitemapEntry{{"http://x/a/", "2016-07-28"}, {"http://x/b/", ""}}, nil, false},
		{"index", index, nil, []string{"http://x/s1.xml", "http://x/s2.xml.gz"}, false},
		{"truncated keeps what came before", urlset[:strings.Index(urlset, "<url><loc>http://x/b/")+12], []sitemapEntry{{"http://x/a/", "2016-07-28"}}, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			urls, nested, err := parseSitemap(strings.NewReader(tt.body))
			if (err != nil) != tt.wantErrors {
				t.Errorf("err = %v, want error %v", err, tt.wantErrors)
			}
			if diff := cmp.Diff(tt.urls, urls); diff != "" {
				t.Errorf("urls (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.nested, nested); diff != "" {
				t.Errorf("nested (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseLastmod(t *testing.T) {
	tests := []struct {
		in   string
		want time.Time
		ok   bool
	}{
		{"2016-07-28", time.Date(2016, 7, 29, 12, 0, 0, 0, time.UTC), true},
		{"2016-07", time.Date(2016, 8, 1, 12, 0, 0, 0, time.UTC), true},
		{"2016", time.Date(2017, 1, 1, 12, 0, 0, 0, time.UTC), true},
		{"2016-07-28T10:30+02:00", time.Date(2016, 7, 28, 8, 31, 0, 0, time.UTC), true},
		{"2016-07-28T10:30:15Z", time.Date(2016, 7, 28, 10, 30, 16, 0, time.UTC), true},
		{"2016-07-28T10:30:15.5Z", time.Date(2016, 7, 28, 10, 30, 15, 5e8, time.UTC), true},
		{"yesterday", time.Time{}, false},
		{"", time.Time{}, false},
	}
	for _, tt := range tests {
		got, ok := parseLastmod(tt.in)
		if ok != tt.ok || !got.Equal(tt.want) {
			t.Errorf("parseLastmod(%q) = %v, %v; want %v, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestCrawlRedirectLimit(t *testing.T) {
	s := newRevisitSite(t, map[string]staticPage{})
	// /r0/ to /r11/ each refresh to the next, and /r11/ back to /r6/.
	for i := range 12 {
		next := i + 1
		if i == 11 {
			next = 6
		}
		s.pages[fmt.Sprintf("/r%d/", i)] = staticPage{ctype: "text/html",
			body: fmt.Sprintf(`<head><meta http-equiv="refresh" content="0; url=/r%d/"></head>`, next)}
	}
	s.pages["/r5/"] = staticPage{ctype: "text/html", body: `<head><meta http-equiv="refresh" content="0; url=http://elsewhere.invalid/"></head>`}
	tests := []struct {
		start  string
		reason SkipReason
	}{
		{"/r0/", SkipOffSite},   // reaches /r5/, which refreshes off the host
		{"/r6/", SkipHTTPError}, // a cycle: more refreshes than maxRedirects
	}
	for _, tt := range tests {
		pages, stats := crawlSite(t, s, func(c *Config) { c.Start = s.srv.URL + tt.start; c.NoSitemaps = true })
		if len(pages) != 0 || stats.Skipped[tt.reason] != 1 {
			t.Errorf("from %s: %d pages, stats %v; want it skipped as %q", tt.start, len(pages), stats, tt.reason)
		}
	}
}

// TestCanonicalHomePage checks that a canonical naming the home page from another path, as broken templates do
// on every page, does not fold pages into it: each stays under its own URL. A canonical naming another page is
// honoured.
func TestCanonicalHomePage(t *testing.T) {
	withCanonical := func(href, text string) staticPage {
		return staticPage{ctype: "text/html", etag: `"x"`, modified: modified,
			body: `<html><head><link rel="canonical" href="` + href + `"></head><body><p>` + text + `</p></body></html>`}
	}
	s := newRevisitSite(t, map[string]staticPage{
		"/":             htmlDoc(`"root"`, `<a href="/c/">c</a> <a href="/d/">d</a> <a href="/e/index.html">e</a> <a href="/f/">f</a>`),
		"/c/":           withCanonical("{{base}}/", "page c"),
		"/d/":           withCanonical("{{base}}/", "page d"),
		"/e/index.html": withCanonical("{{base}}/e/", "page e"),
		"/e/":           htmlDoc(`"e"`, `<p>page e</p>`),
		"/robots.txt":   {ctype: "text/plain", body: "User-agent: *\n"},
	})
	pages, _ := crawlSite(t, s, nil)
	for _, want := range []string{"/", "/c/", "/d/", "/e/"} {
		if _, ok := pages[want]; !ok {
			t.Errorf("page %s missing; got %v", want, keys(pages))
		}
	}
	if p := pages["/e/"]; p.Source != "" && !strings.HasSuffix(p.Source, "/e/index.html") {
		t.Errorf("/e/ source = %q", p.Source)
	}
	for _, p := range []string{"/e/index.html", "/f/"} {
		if _, ok := pages[p]; ok {
			t.Errorf("%s names /e/ as its canonical and must be recorded under it", p)
		}
	}
}

func keys(m map[string]Page) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
