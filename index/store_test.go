package index

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func sample(version string) *Index {
	return &Index{
		Manifest: Manifest{Version: version, Pages: 2, Chunks: 3, Links: 1, Embedder: "local", Dimension: 2,
			Hashes: map[string]string{"http://x/a/": "h1", "http://x/b/": "h2"}},
		Pages: []Page{
			{ID: 0, URL: "http://x/a/", Title: "A", Markdown: "# A", Hash: "h1", Links: []int{1}, Chunks: []int{0, 1}},
			{ID: 1, URL: "http://x/b/", Title: "B", Markdown: "# B", Hash: "h2", Community: SmallComponentCommunity, Chunks: []int{2}},
		},
		Chunks: []Chunk{
			{ID: 0, PageID: 0, Ord: 0, Text: "a0", Tokens: 2},
			{ID: 1, PageID: 0, Ord: 1, Text: "a1", Tokens: 2},
			{ID: 2, PageID: 1, Ord: 0, Text: "b0", Tokens: 2},
		},
		SummaryVectors: [][]float32{{1, 0}, {0, 1}},
		ChunkVectors:   [][]float32{{1, 0}, {0.6, 0.8}, {0, 1}},
		EmbedderState:  []byte{1, 2, 3},
	}
}

// crawled is sample as a crawl leaves it: validators on the pages and a crawl record.
func crawled(version string) *Index {
	ix := sample(version)
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	ix.Pages[0].ETag, ix.Pages[0].LastModified, ix.Pages[0].Fetched = `"a1"`, "Sun, 01 Mar 2026 11:00:00 GMT", at
	ix.Pages[1].ETag, ix.Pages[1].Fetched, ix.Pages[1].Source = `W/"b"`, at, "http://x/b/?print=1"
	ix.Crawl = &CrawlRecord{URLs: []string{"http://x/a/", "http://x/b/", "http://x/logo.png"},
		Links:     [][]int32{{1, 2}, {0}},
		Refreshes: []Refresh{{URL: "http://x/old/", Target: "http://x/a/", ETag: `"r"`, Fetched: at}}}
	return ix
}

// writeAndLoad writes ix as a new version under dir and loads it back.
func writeAndLoad(t *testing.T, dir string, ix *Index) *Index {
	t.Helper()
	if err := Write(dir, ix); err != nil {
		t.Fatal(err)
	}
	got, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func TestWriteLoadRoundTrip(t *testing.T) {
	for _, want := range []*Index{sample("one"), crawled("one")} {
		dir := t.TempDir()
		got := writeAndLoad(t, dir, want)
		want.Manifest.Format = Format
		if diff := cmp.Diff(want, got, cmpopts.IgnoreUnexported(Index{})); diff != "" {
			t.Errorf("round trip (-want +got):\n%s", diff)
		}
		m, err := LoadManifest(dir)
		if err != nil || m.Version != "one" {
			t.Fatalf("LoadManifest = %+v, %v", m, err)
		}
	}
}

func TestLoadEmptyDir(t *testing.T) {
	if _, err := Load(t.TempDir()); !errors.Is(err, ErrNoIndex) {
		t.Fatalf("Load(empty) error = %v, want ErrNoIndex", err)
	}
}

// A crash mid-write leaves a temporary directory and possibly a complete but unreferenced version; readers must
// keep seeing the previous version.
func TestHalfWrittenVersionIsNeverRead(t *testing.T) {
	dir := t.TempDir()
	if err := Write(dir, sample("one")); err != nil {
		t.Fatal(err)
	}
	// Simulate an interrupted write of version two: files partly written, CURRENT not switched.
	half := filepath.Join(dir, ".tmp-crash")
	if err := os.MkdirAll(half, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(half, manifestFile), []byte(`{"version":"two","pages":2`), 0o644)
	os.MkdirAll(filepath.Join(dir, "v-two"), 0o755)
	os.WriteFile(filepath.Join(dir, "v-two", manifestFile), []byte(`{"version":"two"}`), 0o644)

	got, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got.Manifest.Version != "one" {
		t.Fatalf("loaded version %q, want the previous complete version", got.Manifest.Version)
	}
	// The next complete write replaces it and cleans up.
	if err := Write(dir, sample("three")); err != nil {
		t.Fatal(err)
	}
	if got, err := Load(dir); err != nil || got.Manifest.Version != "three" {
		t.Fatalf("after rewrite: %v, %v", got, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "v-two")); !os.IsNotExist(err) {
		t.Errorf("stale version v-two not removed: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "v-one")); err != nil {
		t.Errorf("previous version v-one should be kept for readers that resolved it: %v", err)
	}
}

func TestLoadRejectsDamagedIndex(t *testing.T) {
	tests := []struct {
		name   string
		damage func(ix *Index)
	}{
		{"page link out of range", func(ix *Index) { ix.Pages[0].Links = []int{7} }},
		{"chunk of another page", func(ix *Index) { ix.Pages[1].Chunks = []int{0} }},
		{"missing vectors", func(ix *Index) { ix.ChunkVectors = ix.ChunkVectors[:2] }},
		{"count mismatch", func(ix *Index) { ix.Manifest.Pages = 5 }},
		{"crawl record of too few pages", func(ix *Index) { ix.Crawl.Links = ix.Crawl.Links[:1] }},
		{"crawl record link out of range", func(ix *Index) { ix.Crawl.Links[1] = []int32{3} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			ix := crawled("bad")
			tt.damage(ix)
			if err := Write(dir, ix); err != nil {
				return // rejected at write time is fine too
			}
			if _, err := Load(dir); err == nil {
				t.Fatal("Load accepted a damaged index")
			}
		})
	}
}

func TestComputeStats(t *testing.T) {
	ix := sample("s")
	ix.Chunks[0].Tokens, ix.Chunks[1].Tokens, ix.Chunks[2].Tokens = 300, 10, 120
	ix.Pages[1].FAQ = []FAQEntry{{Question: "q1?", Answer: "a"}, {Question: "q2?", Answer: "b"}}
	ix.Pages[0].ETag = `"e"`
	got := ComputeStats(ix)
	if got.FAQEntries != 2 || got.FAQPages != 1 || got.Revalidatable != 1 {
		t.Errorf("faq %d on %d pages, revalidatable %d; want 2 on 1, 1", got.FAQEntries, got.FAQPages, got.Revalidatable)
	}
	if diff := cmp.Diff(TokenCounts{P50: 120, P95: 120, Max: 300}, got.ChunkTokens); diff != "" {
		t.Errorf("chunk tokens (-want +got):\n%s", diff)
	}
	if got.Pages != 2 || got.Chunks != 3 || got.Links != 1 {
		t.Errorf("counts = %d pages, %d chunks, %d links; want 2, 3, 1", got.Pages, got.Chunks, got.Links)
	}
}

// TestReadJSONArray checks the element-at-a-time reader: a whole array reads back, anything else is an error.
func TestReadJSONArray(t *testing.T) {
	dir := t.TempDir()
	for name, c := range map[string]struct {
		text string
		ok   bool
	}{
		"array":     {`[{"id":0,"text":"a"},{"id":1,"text":"b"}]`, true},
		"empty":     {`[]`, true},
		"object":    {`{"id":0}`, false},
		"truncated": {`[{"id":0,"text":"a"},{"id":1,`, false},
		"open":      {`[{"id":0,"text":"a"}`, false},
		"bad item":  {`[{"id":"zero"}]`, false},
	} {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(dir, strings.ReplaceAll(name, " ", "-")+".json")
			if err := os.WriteFile(p, []byte(c.text), 0o644); err != nil {
				t.Fatal(err)
			}
			got, err := readJSONArray[Chunk](p, 1<<40)
			if (err == nil) != c.ok {
				t.Fatalf("err = %v, want ok %v", err, c.ok)
			}
			if name == "array" && (len(got) != 2 || got[1].Text != "b") {
				t.Errorf("got %+v", got)
			}
		})
	}
}

func TestSearchText(t *testing.T) {
	if got := SearchText("Policies", "Policies > Grades > Units", "x"); got != "Policies > Grades > Units\nx" {
		t.Errorf("SearchText = %q", got)
	}
}
