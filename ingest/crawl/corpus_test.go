package crawl

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/ragproxy/ragproxy/internal/corpustest"
)

const berkeleyBase = "http://guide.berkeley.edu/"

func readMirrorAll(tb testing.TB, dir string) (map[string]Page, []string, Stats) {
	tb.Helper()
	pages := make(map[string]Page)
	var order []string
	stats, err := ReadMirror(context.Background(), dir, berkeleyBase, func(p Page) {
		pages[p.URL] = p
		order = append(order, p.URL)
	})
	if err != nil {
		tb.Fatalf("ReadMirror: %v", err)
	}
	return pages, order, stats
}

func TestReadMirrorBerkeley(t *testing.T) {
	dir := corpustest.Dir(t)
	pages, order, stats := readMirrorAll(t, dir)
	var files, others int
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		switch {
		case err != nil || d.IsDir():
		case strings.HasSuffix(p, ".html"):
			files++
		default:
			others++
		}
		return nil
	})
	if stats.Pages != files || len(pages) != files {
		t.Errorf("emitted %d pages (%d distinct), want one per HTML file (%d); stats %v", stats.Pages, len(pages), files, stats)
	}
	// sitemap.xml, robots.txt and SOURCE.md are not pages.
	if stats.Skipped[SkipContentType] != others || others == 0 {
		t.Errorf("stats %v: want the %d other files skipped as not html/pdf", stats, others)
	}
	for i := 1; i < len(order); i++ {
		if order[i-1] == order[i] {
			t.Fatalf("page %s emitted twice", order[i])
		}
	}

	cal, ok := pages[berkeleyBase+"2016-17/academic-calendar/"]
	if !ok {
		t.Fatalf("no page for 2016-17/academic-calendar/index.html")
	}
	if _, ok := pages[berkeleyBase+"2016-17/search/results.html"]; !ok {
		t.Errorf("no page for 2016-17/search/results.html")
	}
	// Navigation links are recorded, in document order, canonical, same host only.
	wantFirst := []string{berkeleyBase + "2016-17/academic-calendar/", berkeleyBase, berkeleyBase + "2016-17/courses/"}
	if len(cal.Links) < 3 {
		t.Fatalf("academic calendar has %d links", len(cal.Links))
	}
	if diff := cmp.Diff(wantFirst, cal.Links[:3]); diff != "" {
		t.Errorf("first links of the academic calendar (-want +got):\n%s", diff)
	}
	var links, resolved int
	for _, p := range pages {
		seen := map[string]bool{}
		for _, l := range p.Links {
			if !strings.HasPrefix(l, berkeleyBase) || strings.Contains(l, "#") || seen[l] {
				t.Fatalf("page %s: bad or duplicate link %q", p.URL, l)
			}
			seen[l] = true
			links++
			if _, ok := pages[l]; ok {
				resolved++
			}
		}
	}
	t.Logf("%d pages, %d same-host links, %d to pages of the mirror", len(pages), links, resolved)
	// SOURCE.md counts 20,778 unique page-to-page edges among the .html pages.
	if resolved < 20000 {
		t.Errorf("only %d links resolve to mirror pages, want the ~20.7k edges of the corpus", resolved)
	}
}

// TestCrawlBerkeleyLoopback serves the corpus over HTTP on loopback and crawls
// it for real; every page the crawler finds must match the mirror reading of
// the same file, links included.
func TestCrawlBerkeleyLoopback(t *testing.T) {
	dir := corpustest.Dir(t)
	if testing.Short() {
		t.Skip("crawls 780 pages")
	}
	mirror, _, _ := readMirrorAll(t, dir)
	srv := serveCorpus(dir)
	defer srv.Close()

	crawled := make(map[string]Page)
	stats, err := Crawl(context.Background(), Config{
		Start: srv.URL + "/2016-17/", AllowPrivate: true, Delay: NoDelay, HTTPClient: srv.Client(),
	}, func(p Page) { crawled[p.URL] = p })
	if err != nil {
		t.Fatalf("Crawl: %v", err)
	}
	t.Logf("crawl: %v", stats)
	if stats.Skipped[SkipRobots] == 0 {
		t.Errorf("stats %v: want the /search/ URLs refused by the site's robots.txt", stats)
	}

	// Map loopback URLs to mirror URLs; the site's pages answer query-string
	// variants (?filter_1=true, ?P=...) with the same file.
	toMirror := func(u string) string {
		u = berkeleyBase + strings.TrimPrefix(u, srv.URL+"/")
		if i := strings.IndexByte(u, '?'); i >= 0 {
			u = u[:i]
		}
		return u
	}
	reached := make(map[string]bool)
	var crawlLinks, mirrorLinks int
	for u, p := range crawled {
		m, ok := mirror[toMirror(u)]
		if !ok {
			if u != srv.URL+"/" { // the file server's listing of the corpus root
				t.Errorf("crawled %s, which is not a page of the mirror", u)
			}
			continue
		}
		reached[m.URL] = true
		if strings.Contains(u, "?") {
			continue // its relative links resolve against the query URL
		}
		// The mirror also keeps the corpus's absolute links to
		// http://guide.berkeley.edu/..., which are off-host on loopback; every
		// link the crawl records must be one the mirror records.
		mset := make(map[string]bool, len(m.Links))
		for _, l := range m.Links {
			mset[l] = true
		}
		for _, l := range p.Links {
			ml := berkeleyBase + strings.TrimPrefix(l, srv.URL+"/")
			if !mset[ml] {
				t.Errorf("page %s: crawl recorded %s, which the mirror reading does not", u, l)
			}
		}
		crawlLinks += len(p.Links)
		mirrorLinks += len(m.Links)
	}
	t.Logf("crawl recorded %d links, the mirror %d for the same pages", crawlLinks, mirrorLinks)
	if crawlLinks < mirrorLinks*95/100 {
		t.Errorf("crawl recorded %d links, want nearly the mirror's %d", crawlLinks, mirrorLinks)
	}

	// Every mirror page reachable by links from the start page, except those
	// robots.txt forbids, must be crawled.
	want := reachable(mirror, berkeleyBase+"2016-17/")
	var missed []string
	for u := range want {
		if !reached[u] && !strings.Contains(u, "/search/") {
			missed = append(missed, u)
		}
	}
	t.Logf("crawled %d distinct pages of the %d in the mirror; %d are reachable by links from the start page", len(reached), len(mirror), len(want))
	if len(missed) > 0 || len(reached) < 700 {
		t.Errorf("crawled %d pages; missed %d reachable pages: %v", len(reached), len(missed), missed)
	}
}

// reachable returns the mirror pages reachable from start by links.
func reachable(pages map[string]Page, start string) map[string]bool {
	seen := map[string]bool{start: true}
	queue := []string{start}
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		for _, l := range pages[u].Links {
			if i := strings.IndexByte(l, '?'); i >= 0 {
				l = l[:i]
			}
			if _, ok := pages[l]; ok && !seen[l] {
				seen[l] = true
				queue = append(queue, l)
			}
		}
	}
	return seen
}

// serveCorpus serves the corpus directory as the web root, with the site's
// own robots.txt (which keeps crawlers out of /search/) at /robots.txt.
func serveCorpus(dir string) *httptest.Server {
	mux := http.NewServeMux()
	mux.Handle("/", http.FileServer(http.Dir(dir)))
	mux.HandleFunc("/robots.txt", func(w http.ResponseWriter, r *http.Request) {
		http.ServeFile(w, r, filepath.Join(dir, "2016-17", "robots.txt"))
	})
	return httptest.NewServer(mux)
}

func BenchmarkReadMirror(b *testing.B) {
	dir := corpustest.Dir(b)
	b.ReportAllocs()
	var pages, size int
	for b.Loop() {
		stats, err := ReadMirror(context.Background(), dir, berkeleyBase, func(p Page) { size += len(p.Body) })
		if err != nil {
			b.Fatal(err)
		}
		pages += stats.Pages
	}
	b.ReportMetric(float64(pages)/b.Elapsed().Seconds(), "pages/s")
	b.ReportMetric(float64(size)/b.Elapsed().Seconds()/1e6, "MB/s")
}

func BenchmarkCrawlLoopback(b *testing.B) {
	dir := corpustest.Dir(b)
	srv := serveCorpus(dir)
	defer srv.Close()
	b.ReportAllocs()
	var pages int
	for b.Loop() {
		stats, err := Crawl(context.Background(), Config{
			Start: srv.URL + "/2016-17/", AllowPrivate: true, Delay: NoDelay, HTTPClient: srv.Client(),
		}, func(Page) {})
		if err != nil {
			b.Fatal(err)
		}
		pages += stats.Pages
	}
	b.ReportMetric(float64(pages)/b.Elapsed().Seconds(), "pages/s")
}
