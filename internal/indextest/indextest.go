// Package indextest builds indexes for tests: a mirror (the bundled example site, or the Berkeley corpus) ingested
// into a directory, and a retriever opened over it with the default configuration.
package indextest

import (
	"context"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/ragproxy/ragproxy/examples"
	"github.com/ragproxy/ragproxy/ingest"
	"github.com/ragproxy/ragproxy/retrieval"
	"github.com/ragproxy/ragproxy/tokenizer"
)

// ExampleSite copies the bundled example site into a temporary directory and returns it; its pages are indexed
// under examples.BaseURL.
func ExampleSite(tb testing.TB) string {
	tb.Helper()
	sub, err := fs.Sub(examples.Site, "site")
	if err != nil {
		tb.Fatal(err)
	}
	dir := filepath.Join(tb.TempDir(), "site")
	if err := os.CopyFS(dir, sub); err != nil {
		tb.Fatal(err)
	}
	return dir
}

// Build ingests the mirror at site, whose pages live under base, into indexDir, without logging.
func Build(tb testing.TB, site, base, indexDir string) {
	tb.Helper()
	cfg := ingest.Config{Source: site, BaseURL: base, IndexDir: indexDir, Logger: slog.New(slog.DiscardHandler)}
	if _, err := ingest.Run(context.Background(), cfg); err != nil {
		tb.Fatalf("ingest %s: %v", site, err)
	}
}

// Open opens a retriever with the default configuration over the index in dir (built with the local embedder).
func Open(tb testing.TB, dir string) (*retrieval.Retriever, *tokenizer.Tokenizer) {
	tb.Helper()
	tok, err := tokenizer.New()
	if err != nil {
		tb.Fatal(err)
	}
	r, err := retrieval.Open(dir, nil, tok, retrieval.Config{})
	if err != nil {
		tb.Fatal(err)
	}
	return r, tok
}

// Example indexes the bundled example site into a temporary directory and opens a retriever over it.
func Example(tb testing.TB) (*retrieval.Retriever, *tokenizer.Tokenizer) {
	tb.Helper()
	dir := tb.TempDir()
	Build(tb, ExampleSite(tb), examples.BaseURL, dir)
	return Open(tb, dir)
}
