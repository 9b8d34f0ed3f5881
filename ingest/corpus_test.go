package ingest

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ragproxy/ragproxy/index"
	"github.com/ragproxy/ragproxy/ingest/crawl"
	"github.com/ragproxy/ragproxy/internal/corpustest"
)

// corpusBase is the URL the Berkeley mirror was saved from.
const corpusBase = "http://guide.berkeley.edu/"

// siteChrome is text of the navigation menu, header, print dialog and footer of every CourseLeaf page.
var siteChrome = []string{"Skip to Content", "Berkeley Academic Guide Home", "Search Berkeley Academic Guide",
	"Send Page to Printer", "Download PDF of this page", "Print Options"}

// checkCorpusIndex asserts the properties any index of the Berkeley corpus has, and loads it back.
func checkCorpusIndex(t *testing.T, dir string, rep *Report) *index.Index {
	t.Helper()
	ix, err := index.Load(dir)
	if err != nil {
		t.Fatalf("index.Load: %v", err)
	}
	t.Logf("report %+v; communities %d, modularity %.3f, small-component pages %d", rep, ix.Manifest.Communities,
		ix.Manifest.Modularity, ix.Manifest.SmallComponentPages)
	// The mirror holds 780 pages, a few of them copies of others; most must survive cleaning and link cleaning.
	if rep.Pages < 600 || rep.Pages > rep.Fetched || rep.Pages != len(ix.Pages) {
		t.Errorf("%d pages indexed (%d loaded) of %d fetched", rep.Pages, len(ix.Pages), rep.Fetched)
	}
	if rep.Chunks < rep.Pages || rep.Chunks != len(ix.Chunks) || rep.Links < rep.Pages || rep.Links != ix.Manifest.Links {
		t.Errorf("report: %d chunks, %d links; index: %d chunks, %d links", rep.Chunks, rep.Links, len(ix.Chunks),
			ix.Manifest.Links)
	}
	m := ix.Manifest
	if m.Version != rep.Version || m.Embedder == "" || m.Dimension <= 0 || m.Tokenizer != "o200k_base" ||
		m.Summarizer != "extractive" || len(m.Hashes) != len(ix.Pages) || m.BuiltAt.IsZero() || m.Source == "" ||
		len(m.Settings) == 0 || m.Communities < 2 || m.Modularity <= 0.3 {
		t.Errorf("manifest fields unset or implausible: %+v", withoutHashes(m))
	}
	size := map[int]int{}
	for _, p := range ix.Pages {
		size[p.Component]++
	}
	for _, p := range ix.Pages {
		if len(p.Chunks) == 0 || strings.TrimSpace(p.Summary) == "" {
			t.Errorf("page %s has %d chunks and summary %q", p.URL, len(p.Chunks), p.Summary)
		}
		if m.Hashes[p.URL] != p.Hash {
			t.Errorf("manifest hash of %s is %q, page hash %q", p.URL, m.Hashes[p.URL], p.Hash)
		}
		small := size[p.Component] < 10
		if small != (p.Community == index.SmallComponentCommunity) {
			t.Errorf("page %s in a component of %d pages has community %d", p.URL, size[p.Component], p.Community)
		}
		for _, nav := range siteChrome {
			if strings.Contains(p.Markdown, nav) {
				t.Errorf("page %s keeps the site's menu text %q", p.URL, nav)
			}
		}
	}
	if len(ix.SummaryVectors) != len(ix.Pages) || len(ix.ChunkVectors) != len(ix.Chunks) ||
		len(ix.ChunkVectors[0]) != m.Dimension {
		t.Errorf("%d summary and %d chunk vectors of %d for %d pages, %d chunks", len(ix.SummaryVectors),
			len(ix.ChunkVectors), len(ix.ChunkVectors[0]), len(ix.Pages), len(ix.Chunks))
	}
	return ix
}

func withoutHashes(m index.Manifest) index.Manifest {
	m.Hashes = nil
	return m
}

func TestIngestBerkeleyMirror(t *testing.T) {
	src := corpustest.Dir(t)
	dir := filepath.Join(t.TempDir(), "ix")
	rep, err := Run(context.Background(), Config{Source: src, BaseURL: corpusBase, IndexDir: dir, Logger: quiet()})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if rep.Fetched < 700 || rep.Reused != 0 || rep.Embedded != rep.Pages+rep.Chunks || !rep.Changed {
		t.Errorf("first build report %+v", rep)
	}
	ix := checkCorpusIndex(t, dir, rep)
	if p, ok := ix.PageByURL(corpusBase + "2016-17/undergraduate/degree-programs/bioengineering/"); !ok {
		t.Error("the Bioengineering program page is missing")
	} else if !strings.Contains(p.Markdown, "## Major Requirements") || p.Title != "Bioengineering" {
		t.Errorf("Bioengineering page: title %q, markdown lacks its requirements", p.Title)
	}
}

func TestIngestBerkeleyCrawl(t *testing.T) {
	src := corpustest.Dir(t)
	if testing.Short() {
		t.Skip("crawls 780 pages")
	}
	mux := http.NewServeMux()
	mux.Handle("/", http.FileServer(http.Dir(src)))
	mux.HandleFunc("/robots.txt", func(w http.ResponseWriter, r *http.Request) {
		http.ServeFile(w, r, filepath.Join(src, "2016-17", "robots.txt"))
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()

	dir := filepath.Join(t.TempDir(), "ix")
	rep, err := Run(context.Background(), Config{Source: srv.URL + "/2016-17/", IndexDir: dir, Logger: quiet(),
		Crawl: crawl.Config{AllowPrivate: true, Delay: crawl.NoDelay, HTTPClient: srv.Client()}})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	ix := checkCorpusIndex(t, dir, rep)
	for _, p := range ix.Pages {
		if !strings.HasPrefix(p.URL, srv.URL+"/") {
			t.Fatalf("page %s is not on the crawled host", p.URL)
		}
		if p.LastModified == "" || p.Fetched.IsZero() {
			t.Fatalf("page %s has no validator: Last-Modified %q, fetched %v", p.URL, p.LastModified, p.Fetched)
		}
	}

	// The file server answers If-Modified-Since: a re-crawl of the unchanged site gets a 304 for every page of
	// the index and finds the same pages.
	again, err := Run(context.Background(), Config{Source: srv.URL + "/2016-17/", IndexDir: dir, Logger: quiet(),
		Crawl: crawl.Config{AllowPrivate: true, Delay: crawl.NoDelay, HTTPClient: srv.Client()}})
	if err != nil {
		t.Fatalf("re-crawl: %v", err)
	}
	if again.Changed || again.Version != rep.Version || again.NotModified < again.Pages || again.Reused != again.Pages ||
		again.FetchedBytes >= rep.FetchedBytes/10 {
		t.Errorf("unchanged re-crawl %+v\nafter %+v", again, rep)
	}
}
