package retrieval_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/ragproxy/ragproxy/examples"
	"github.com/ragproxy/ragproxy/index"
	"github.com/ragproxy/ragproxy/internal/indextest"
	"github.com/ragproxy/ragproxy/retrieval"
	"github.com/ragproxy/ragproxy/tokenizer"
)

// TestOpenGently checks that loading on one core builds the same retriever as Open: the same pages, passages
// and context for the example questions.
func TestOpenGently(t *testing.T) {
	dir, tok := exampleIndexDir(t)
	fast, err := retrieval.Open(dir, nil, tok, retrieval.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	gentle, err := retrieval.OpenGently(dir, nil, tok, retrieval.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	sameRetrieval(t, fast, gentle, "OpenGently",
		[]string{"when do fall classes start 2024", "who is chair of the CS dept", "library hours saturday"})
}

// TestSearchFile checks that a retriever reading the search structures ingest stored (search.bin) answers as
// one that builds them from the texts, in memory or on disk; that a file of another version is ignored; and
// that a damaged one stops the load.
func TestSearchFile(t *testing.T) {
	dir, tok := exampleIndexDir(t)
	ix, err := index.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	emb, err := retrieval.EmbedderFor(ix, nil)
	if err != nil {
		t.Fatal(err)
	}
	built, err := retrieval.New(ix, emb, tok, retrieval.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	stored, err := retrieval.Open(dir, nil, tok, retrieval.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	if !stored.Index().TextsOnDisk() {
		t.Error("Open left the texts in memory")
	}
	path := filepath.Join(stored.Index().Dir(), retrieval.SearchFile)
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("ingest stored no search file: %v", err)
	}

	// A file written for another version, from other texts, is ignored: the structures are built again.
	other, _ := ix.Whole()
	o := *other
	o.Manifest.Version = "other"
	o.Chunks = slices.Clone(o.Chunks)
	for i := range o.Chunks {
		o.Chunks[i].Text = "nothing of the site"
	}
	var stale bytes.Buffer
	if err := retrieval.WriteSearch(&stale, &o); err != nil {
		t.Fatal(err)
	}
	replace(t, path, stale.Bytes())
	rebuilt, err := retrieval.Open(dir, nil, tok, retrieval.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	sameRetrieval(t, built, stored, "the search file", exampleQuestions(t))
	sameRetrieval(t, built, rebuilt, "a stale search file", exampleQuestions(t))

	// A damaged file (a byte of the chunk index flipped) stops the load with an error naming it.
	bad := slices.Clone(good)
	bad[len(bad)/4] ^= 0xff
	replace(t, path, bad)
	if _, err := retrieval.Open(dir, nil, tok, retrieval.DefaultConfig()); err == nil || !strings.Contains(err.Error(), retrieval.SearchFile) {
		t.Errorf("Open with a damaged search file: %v, want an error naming %s", err, retrieval.SearchFile)
	}
}

// exampleIndexDir ingests the bundled example site into a temporary directory and returns it, with a tokenizer.
func exampleIndexDir(t *testing.T) (string, *tokenizer.Tokenizer) {
	t.Helper()
	dir := t.TempDir()
	indextest.Build(t, indextest.ExampleSite(t), examples.BaseURL, dir)
	tok, err := tokenizer.New()
	if err != nil {
		t.Fatal(err)
	}
	return dir, tok
}

// replace writes a new file in place of path, as ingest writes versions: never into a file a retriever may have
// mapped (truncating a mapped file faults its readers).
func replace(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path+".new", b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path+".new", path); err != nil {
		t.Fatal(err)
	}
}

func exampleQuestions(t *testing.T) []string {
	t.Helper()
	var qs []string
	for line := range strings.Lines(string(examples.Questions)) {
		var q struct{ Question string }
		if err := json.Unmarshal([]byte(line), &q); err != nil {
			t.Fatal(err)
		}
		qs = append(qs, q.Question)
	}
	return qs
}

// TestOpenFormat0 opens an index in the layout of releases before format 2 (texts inside pages.json and
// chunks.json, no search file), as a server upgraded in place finds it: it answers as the same index in the
// current format.
func TestOpenFormat0(t *testing.T) {
	dir, tok := exampleIndexDir(t)
	current, err := retrieval.Open(dir, nil, tok, retrieval.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	ix, err := index.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	v := ix.Dir()
	old := t.TempDir()
	ov := filepath.Join(old, filepath.Base(v))
	if err := os.MkdirAll(ov, 0o755); err != nil {
		t.Fatal(err)
	}
	m := ix.Manifest
	m.Format = 0
	writeJSON := func(name string, x any) {
		b, err := json.Marshal(x)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(ov, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeJSON("manifest.json", m)
	writeJSON("pages.json", ix.Pages)
	writeJSON("chunks.json", ix.Chunks)
	for _, f := range []string{"summaries.f32", "chunks.f32", "embedder.bin"} {
		b, err := os.ReadFile(filepath.Join(v, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(ov, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(old, "CURRENT"), []byte(filepath.Base(v)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	upgraded, err := retrieval.Open(old, nil, tok, retrieval.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	if upgraded.Index().Manifest.Format != 0 || upgraded.Index().TextsOnDisk() {
		t.Errorf("format %d, texts on disk %v: not read as format 0", upgraded.Index().Manifest.Format, upgraded.Index().TextsOnDisk())
	}
	sameRetrieval(t, current, upgraded, "format 0", exampleQuestions(t))
}

// sameRetrieval checks that got retrieves what want does for every question: the same pages, context and
// chunks. what names got in the failures.
func sameRetrieval(t *testing.T, want, got *retrieval.Retriever, what string, questions []string) {
	t.Helper()
	for _, q := range questions {
		w, err := want.Retrieve(context.Background(), q, nil)
		if err != nil {
			t.Fatal(err)
		}
		g, err := got.Retrieve(context.Background(), q, nil)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(w.Pages, g.Pages); diff != "" || w.Context != g.Context ||
			!cmp.Equal(w.Chunks, g.Chunks, cmpopts.IgnoreUnexported(retrieval.ChunkHit{})) {
			t.Errorf("%q: %s retrieves otherwise (-want +%s):\n%s", q, what, what, diff)
		}
	}
}
