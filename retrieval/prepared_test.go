package retrieval

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ragproxy/ragproxy/index"
	"github.com/ragproxy/ragproxy/retrieval/lexical"
	"github.com/ragproxy/ragproxy/retrieval/vector"
)

// smallIndex is an index of two pages and three chunks, texts in memory.
func smallIndex() *index.Index {
	return &index.Index{
		Manifest: index.Manifest{Version: "v1"},
		Pages: []index.Page{
			{ID: 0, URL: "http://x/a/", Title: "Admissions", Markdown: "# Admissions\n\nApply by the Master of Fine Arts (MFA) deadline.", Chunks: []int{0, 1}},
			{ID: 1, URL: "http://x/b/", Title: "Tuition", Markdown: "| Fee | Amount |\n| --- | --- |\n| Tuition | 100 |", Chunks: []int{2}},
		},
		Chunks: []index.Chunk{
			{ID: 0, PageID: 0, Text: "# Admissions"},
			{ID: 1, PageID: 0, Ord: 1, Text: "Apply by the Master of Fine Arts (MFA) deadline."},
			{ID: 2, PageID: 1, Text: "| Fee | Amount |\n| --- | --- |\n| Tuition | 100 |"},
		},
	}
}

// FuzzReadParts feeds damaged search files to the reader a server runs at start: it must fail with an error,
// never panic or reserve memory the input does not hold.
func FuzzReadParts(f *testing.F) {
	ix := smallIndex()
	var b bytes.Buffer
	if err := WriteSearch(&b, ix); err != nil {
		f.Fatal(err)
	}
	f.Add(b.Bytes())
	f.Add(b.Bytes()[:len(b.Bytes())/2])
	f.Fuzz(func(t *testing.T, data []byte) {
		sp, err := readParts(data, "v1", len(ix.Pages), len(ix.Chunks))
		if err != nil {
			return
		}
		// What reads must be usable.
		sp.chunkBM25.Search("admissions deadline", 3, nil)
		sp.lex.expand("mfa tuition", nil)
	})
}

func TestReadPartsRoundTrip(t *testing.T) {
	ix := smallIndex()
	var b bytes.Buffer
	if err := WriteSearch(&b, ix); err != nil {
		t.Fatal(err)
	}
	sp, err := readParts(b.Bytes(), "v1", 2, 3)
	if err != nil {
		t.Fatal(err)
	}
	built, err := buildParts(ix, false, lexical.Analyzer{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := sp.chunkBM25.Search("mfa deadline", 3, nil), built.chunkBM25.Search("mfa deadline", 3, nil); len(got) == 0 || got[0] != want[0] {
		t.Errorf("chunk search read back = %v, built = %v", got, want)
	}
	if sp.lex.acronyms["mfa"] != "Master of Fine Arts" || len(sp.textKeys) != 3 || sp.textKeys[1] != built.textKeys[1] {
		t.Errorf("read back: acronyms %v, text keys %v", sp.lex.acronyms, sp.textKeys)
	}
	if _, err := readParts(b.Bytes(), "v2", 2, 3); err == nil {
		t.Error("a search file of another version was read")
	}
	if _, err := readParts(b.Bytes(), "v1", 2, 4); err == nil {
		t.Error("a search file of other counts was read")
	}
}

// TestWriteSearchDeterministic checks that the same index gives the same search file, byte for byte.
func TestWriteSearchDeterministic(t *testing.T) {
	var a, b bytes.Buffer
	if err := WriteSearch(&a, smallIndex()); err != nil {
		t.Fatal(err)
	}
	for range 5 {
		b.Reset()
		if err := WriteSearch(&b, smallIndex()); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a.Bytes(), b.Bytes()) {
			t.Fatal("two search files of one index differ")
		}
	}
}

// TestSearchFileChunkLists checks that the search file of an index with vector.IVFMinRows chunks holds IVF lists
// that the retriever searches with, and that a small index's holds none (exact search).
func TestSearchFileChunkLists(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const pages, perPage, dim = 500, vector.IVFMinRows / 500, 8
	ix := &index.Index{Manifest: index.Manifest{Version: "big"}}
	for p := range pages {
		page := index.Page{ID: p, URL: fmt.Sprintf("http://x/%d/", p), Title: fmt.Sprintf("Page %d", p)}
		for o := range perPage {
			id := len(ix.Chunks)
			ix.Chunks = append(ix.Chunks, index.Chunk{ID: id, PageID: p, Ord: o, Text: fmt.Sprintf("chunk %d of page %d", o, p)})
			page.Chunks = append(page.Chunks, id)
			v := make([]float32, dim)
			var n float32
			for i := range v {
				v[i] = float32(rng.NormFloat64())
				n += v[i] * v[i]
			}
			for i := range v {
				v[i] /= float32(math.Sqrt(float64(n)))
			}
			ix.ChunkVectors = append(ix.ChunkVectors, v)
		}
		ix.Pages = append(ix.Pages, page)
		ix.SummaryVectors = append(ix.SummaryVectors, ix.ChunkVectors[len(ix.ChunkVectors)-1])
	}
	// Stored with the version as ingest stores it and loaded as a server loads it, the lists search the mapped
	// grouped rows and answer as lists built in memory.
	dir := t.TempDir()
	ix.Manifest.Pages, ix.Manifest.Chunks = len(ix.Pages), len(ix.Chunks)
	if err := index.WriteWith(dir, ix, index.WriteOptions{Files: SearchFilesOf(ix)}); err != nil {
		t.Fatal(err)
	}
	served, err := index.LoadWith(dir, index.LoadOptions{TextsOnDisk: true, MapVectors: true})
	if err != nil {
		t.Fatal(err)
	}
	sp, err := readSearchFile(served)
	if err != nil {
		t.Fatal(err)
	}
	r, err := newRetriever(served, nil, nil, Config{}, sp)
	if err != nil || r.chunkANN == nil {
		t.Fatalf("served retriever: %v, lists %v", err, r != nil && r.chunkANN != nil)
	}
	built, err := vector.NewIVF(ix.ChunkVectors, vector.IVFConfig{})
	if err != nil {
		t.Fatal(err)
	}
	qs := ix.ChunkVectors[:20]
	if diff := cmp.Diff(built.SearchMultiFilter(qs, 40, nil), r.chunkANN.SearchMultiFilter(qs, 40, nil)); diff != "" {
		t.Errorf("served lists (-built +served):\n%s", diff)
	}

	// The grouped rows are the file's: other rows there are refused.
	path := filepath.Join(served.Dir(), GroupedFile)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[8] ^= 0x40
	if err := os.WriteFile(path+".new", b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path+".new", path); err != nil { // never rewrite a mapped file in place
		t.Fatal(err)
	}
	again, err := index.LoadWith(dir, index.LoadOptions{TextsOnDisk: true, MapVectors: true})
	if err != nil {
		t.Fatal(err)
	}
	if sp, err = readSearchFile(again); err == nil {
		_, err = newRetriever(again, nil, nil, Config{}, sp)
	}
	if err == nil || !strings.Contains(err.Error(), GroupedFile) {
		t.Errorf("grouped rows of other vectors: %v, want an error naming %s", err, GroupedFile)
	}

	small := smallIndex()
	small.ChunkVectors = [][]float32{{1, 0}, {0, 1}, {1, 0}}
	small.SummaryVectors = [][]float32{{1, 0}, {0, 1}}
	for _, tt := range []struct {
		ix    *index.Index
		lists bool
	}{{ix, true}, {small, false}} {
		var b bytes.Buffer
		if err := WriteSearch(&b, tt.ix); err != nil {
			t.Fatal(err)
		}
		sp, err := readParts(b.Bytes(), tt.ix.Manifest.Version, len(tt.ix.Pages), len(tt.ix.Chunks))
		if err != nil {
			t.Fatal(err)
		}
		r, err := newRetriever(tt.ix, nil, nil, Config{}, sp)
		if err != nil {
			t.Fatal(err)
		}
		if (r.chunkANN != nil) != tt.lists {
			t.Errorf("%d chunks: searched with IVF lists %v, want %v", len(tt.ix.Chunks), r.chunkANN != nil, tt.lists)
		}
	}
}
