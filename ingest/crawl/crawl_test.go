package crawl

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// site is a fake website: path -> handler.
type site map[string]http.HandlerFunc

func htmlPage(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte("<!doctype html><html><head><title>t</title></head><body>" + body + "</body></html>"))
	}
}

func typed(ctype, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", ctype)
		_, _ = w.Write([]byte(body))
	}
}

func serve(t *testing.T, s site) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h, ok := s[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		h(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// crawlAll runs Crawl against srv with test settings plus mod, and returns the
// emitted pages by path.
func crawlAll(t *testing.T, srv *httptest.Server, start string, mod func(*Config)) (map[string]Page, Stats) {
	t.Helper()
	cfg := Config{Start: srv.URL + start, AllowPrivate: true, Delay: NoDelay, HTTPClient: srv.Client()}
	if mod != nil {
		mod(&cfg)
	}
	pages := make(map[string]Page)
	stats, err := Crawl(context.Background(), cfg, func(p Page) {
		if _, dup := pages[pathOf(p.URL)]; dup {
			t.Errorf("page %s emitted twice", p.URL)
		}
		pages[pathOf(p.URL)] = p
	})
	if err != nil {
		t.Fatalf("Crawl: %v", err)
	}
	return pages, stats
}

func paths(pages map[string]Page) []string {
	out := make([]string, 0, len(pages))
	for p := range pages {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

func TestCrawlFollowsLinksAndRecordsThem(t *testing.T) {
	srv := serve(t, site{
		"/":           htmlPage(`<nav><a href="/a/">A</a></nav><a href="/b.html#x">B</a><a href="/a">A again</a><a href="mailto:x@y.z">m</a><a href="https://elsewhere.example/">ext</a>`),
		"/a/":         htmlPage(`<a href="../">home</a><a href="deep/">deep</a><a href="/logo.png">img</a>`),
		"/b.html":     htmlPage(`<a href="/">home</a>`),
		"/a/deep/":    htmlPage(`<p>leaf</p>`),
		"/logo.png":   typed("image/png", "\x89PNG"),
		"/robots.txt": func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) },
	})
	pages, stats := crawlAll(t, srv, "/", nil)
	if diff := cmp.Diff([]string{"/", "/a/", "/a/deep/", "/b.html"}, paths(pages)); diff != "" {
		t.Errorf("pages (-want +got):\n%s", diff)
	}
	root := srv.URL + "/"
	wantLinks := []string{root + "a/", root + "b.html"}
	if diff := cmp.Diff(wantLinks, pages["/"].Links); diff != "" {
		t.Errorf("links of / (-want +got):\n%s", diff)
	}
	// The image link is recorded (link cleaning decides later) but never fetched.
	if diff := cmp.Diff([]string{root, root + "a/deep/", root + "logo.png"}, pages["/a/"].Links); diff != "" {
		t.Errorf("links of /a/ (-want +got):\n%s", diff)
	}
	if stats.Pages != 4 || stats.SkippedTotal() != 0 {
		t.Errorf("stats = %v, want 4 pages, none skipped", stats)
	}
	if got := pages["/"].ContentType; got != "text/html" {
		t.Errorf("content type = %q", got)
	}
}

func TestCrawlHonoursRobots(t *testing.T) {
	srv := serve(t, site{
		"/robots.txt": typed("text/plain", "User-agent: *\nDisallow: /private/\n\nUser-agent: other\nDisallow: /\n"),
		"/":           htmlPage(`<a href="/private/x/">p</a><a href="/public/">q</a>`),
		"/public/":    htmlPage(`ok`),
		"/private/x/": htmlPage(`secret`),
	})
	pages, stats := crawlAll(t, srv, "/", nil)
	if diff := cmp.Diff([]string{"/", "/public/"}, paths(pages)); diff != "" {
		t.Errorf("pages (-want +got):\n%s", diff)
	}
	if stats.Skipped[SkipRobots] != 1 {
		t.Errorf("robots skips = %d, want 1 (%v)", stats.Skipped[SkipRobots], stats)
	}
}

func TestCrawlFollowsRedirects(t *testing.T) {
	srv := serve(t, site{
		"/": htmlPage(`<a href="/old/">old</a><a href="/new/">new</a><a href="/away/">away</a>`),
		"/old/": func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "/new/", http.StatusMovedPermanently)
		},
		"/away/": func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "http://elsewhere.invalid/", http.StatusFound)
		},
		"/new/": htmlPage(`moved here`),
	})
	pages, stats := crawlAll(t, srv, "/", nil)
	if diff := cmp.Diff([]string{"/", "/new/"}, paths(pages)); diff != "" {
		t.Errorf("pages (-want +got):\n%s", diff)
	}
	if got := pages["/new/"].URL; got != srv.URL+"/new/" {
		t.Errorf("redirected page URL = %q, want the final URL", got)
	}
	if stats.Skipped[SkipDuplicate] != 1 || stats.Skipped[SkipOffSite] != 1 {
		t.Errorf("stats = %v, want one duplicate (/old/ landing on /new/) and one off-site redirect", stats)
	}
}

func TestCrawlSizeCap(t *testing.T) {
	big := strings.Repeat("x", 3000)
	srv := serve(t, site{
		"/":       htmlPage(`<a href="/big/">big</a><a href="/stream/">stream</a><a href="/small/">small</a>`),
		"/big/":   htmlPage(big),
		"/small/": htmlPage("small"),
		// No Content-Length: the cap is enforced while reading.
		"/stream/": func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			for range 6 {
				_, _ = w.Write([]byte(big[:500]))
				w.(http.Flusher).Flush()
			}
		},
	})
	pages, stats := crawlAll(t, srv, "/", func(c *Config) { c.MaxBytes = 2000 })
	if diff := cmp.Diff([]string{"/", "/small/"}, paths(pages)); diff != "" {
		t.Errorf("pages (-want +got):\n%s", diff)
	}
	if stats.Skipped[SkipTooLarge] != 2 {
		t.Errorf("too-large skips = %d, want 2 (%v)", stats.Skipped[SkipTooLarge], stats)
	}
}

func TestCrawlKeepsHTMLAndPDFOnly(t *testing.T) {
	pdf := "%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n"
	srv := serve(t, site{
		"/":               htmlPage(`<a href="/doc/report.pdf">r</a><a href="/data">d</a><a href="/sniffed/">s</a><a href="/missing/">m</a>`),
		"/doc/report.pdf": typed("application/pdf", pdf),
		"/data/":          typed("application/octet-stream", "\x00\x01"),
		"/sniffed/": func(w http.ResponseWriter, _ *http.Request) {
			w.Header()["Content-Type"] = nil // no header: the body is sniffed
			_, _ = w.Write([]byte("<html><body><p>sniffed</p></body></html>"))
		},
	})
	pages, stats := crawlAll(t, srv, "/", nil)
	if diff := cmp.Diff([]string{"/", "/doc/report.pdf", "/sniffed/"}, paths(pages)); diff != "" {
		t.Errorf("pages (-want +got):\n%s", diff)
	}
	p := pages["/doc/report.pdf"]
	if p.ContentType != "application/pdf" || string(p.Body) != pdf || p.Links != nil {
		t.Errorf("pdf page = {%q, %d bytes, links %v}, want the PDF body with no links", p.ContentType, len(p.Body), p.Links)
	}
	if stats.Skipped[SkipContentType] != 1 || stats.Skipped[SkipHTTPError] != 1 {
		t.Errorf("stats = %v, want one non-html/pdf and one http error", stats)
	}
}

func TestCrawlDepthAndPrefix(t *testing.T) {
	srv := serve(t, site{
		"/en/":       htmlPage(`<a href="/en/1/">1</a><a href="/de/">de</a>`),
		"/en/1/":     htmlPage(`<a href="/en/1/2/">2</a>`),
		"/en/1/2/":   htmlPage(`<a href="/en/1/2/3/">3</a>`),
		"/en/1/2/3/": htmlPage(`end`),
		"/de/":       htmlPage(`german`),
	})
	tests := []struct {
		name string
		cfg  func(*Config)
		want []string
	}{
		{"prefix and depth 2", func(c *Config) { c.Prefix = "/en/"; c.MaxDepth = 2 }, []string{"/en/", "/en/1/", "/en/1/2/"}},
		{"prefix, default depth", func(c *Config) { c.Prefix = "/en/" }, []string{"/en/", "/en/1/", "/en/1/2/", "/en/1/2/3/"}},
		{"whole host, depth 1", func(c *Config) { c.MaxDepth = 1 }, []string{"/de/", "/en/", "/en/1/"}},
		{"start only", func(c *Config) { c.MaxDepth = -1 }, []string{"/en/"}},
		{"max pages", func(c *Config) { c.MaxPages = 2; c.Concurrency = 1 }, []string{"/en/", "/en/1/"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pages, _ := crawlAll(t, srv, "/en/", tt.cfg)
			if diff := cmp.Diff(tt.want, paths(pages)); diff != "" {
				t.Errorf("pages (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCrawlRefusesPrivateAddresses(t *testing.T) {
	srv := serve(t, site{"/": htmlPage(`hello`)})
	for _, client := range []*http.Client{nil, srv.Client()} {
		var n int
		stats, err := Crawl(context.Background(), Config{Start: srv.URL + "/", Delay: NoDelay, HTTPClient: client}, func(Page) { n++ })
		if err != nil {
			t.Fatalf("Crawl: %v", err)
		}
		if n != 0 || stats.Pages != 0 || stats.Skipped[SkipPrivate] != 1 {
			t.Errorf("emitted %d, stats %v: want the loopback start page refused", n, stats)
		}
	}
	// A name that resolves to loopback is refused too: the check runs on the dialled address.
	port := srv.URL[strings.LastIndexByte(srv.URL, ':'):]
	stats, err := Crawl(context.Background(), Config{Start: "http://localhost" + port + "/", Delay: NoDelay}, func(Page) {})
	if err != nil {
		t.Fatalf("Crawl: %v", err)
	}
	if stats.Skipped[SkipPrivate] != 1 {
		t.Errorf("stats %v: want localhost refused", stats)
	}
}

func TestIsPublic(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:80": false, "10.1.2.3:80": false, "192.168.0.1:80": false, "172.16.5.4:80": false,
		"169.254.169.254:80": false, "100.64.0.1:80": false, "0.0.0.0:80": false, "[::1]:80": false,
		"[fe80::1]:80": false, "[fd00::1]:80": false, "[::ffff:127.0.0.1]:80": false,
		"8.8.8.8:443": true, "128.32.0.1:80": true, "[2001:4860:4860::8888]:443": true,
	} {
		err := publicOnly("tcp", addr, nil)
		if got := err == nil; got != want {
			t.Errorf("publicOnly(%s) = %v, want public=%v", addr, err, want)
		}
		if err != nil && !errors.Is(err, ErrPrivateAddress) {
			t.Errorf("publicOnly(%s) error %v does not wrap ErrPrivateAddress", addr, err)
		}
	}
}

func TestCrawlRejectsBadConfig(t *testing.T) {
	for _, start := range []string{"", "ftp://example.com/", "/relative"} {
		if _, err := Crawl(context.Background(), Config{Start: start}, func(Page) {}); err == nil {
			t.Errorf("Crawl(start %q) succeeded, want an error", start)
		}
	}
	type otherRT struct{ http.RoundTripper }
	_, err := Crawl(context.Background(), Config{Start: "http://example.com/", HTTPClient: &http.Client{Transport: otherRT{}}}, func(Page) {})
	if err == nil {
		t.Error("Crawl with an unguardable transport succeeded, want an error")
	}
}

func TestCrawlStopsOnCancel(t *testing.T) {
	srv := serve(t, site{"/": htmlPage(`<a href="/a/">a</a>`), "/a/": htmlPage(`a`)})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Crawl(ctx, Config{Start: srv.URL + "/", AllowPrivate: true, Delay: NoDelay}, func(Page) {})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Crawl after cancel = %v, want context.Canceled", err)
	}
}

// TestCrawlBounds checks the bounds a hostile or careless site cannot lift: a page cap by default (a link trap
// makes pages without end) and a ceiling on robots.txt's Crawl-delay.
func TestCrawlBounds(t *testing.T) {
	if got := (Config{}).withDefaults().MaxPages; got != DefaultMaxPages {
		t.Errorf("default page cap = %d, want %d", got, DefaultMaxPages)
	}
	if got := (Config{MaxPages: -1}).withDefaults().MaxPages; got != 0 {
		t.Errorf("a negative page cap must mean no cap, got %d", got)
	}
	// A query-string trap: every page links to the next.
	trap := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := len(r.URL.RawQuery)
		fmt.Fprintf(w, `<html><body><main><p>page %d</p><a href="/cal/?%s">next</a></main></body></html>`, n, strings.Repeat("x", n+1))
	})
	srv := serve(t, site{
		"/robots.txt": typed("text/plain", "User-agent: *\nCrawl-delay: 86400\n"),
		"/cal/":       trap,
	})
	emitted := 0
	stats, err := Crawl(context.Background(), Config{Start: srv.URL + "/cal/", AllowPrivate: true, HTTPClient: srv.Client(), Delay: NoDelay,
		MaxPages: 30, MaxDepth: 1000, MaxCrawlDelay: time.Millisecond}, func(Page) { emitted++ })
	if err != nil || emitted != 30 || stats.Pages != 30 {
		t.Errorf("the trap gave %d pages (%d counted, %v), want the cap of 30", emitted, stats.Pages, err)
	}
}
