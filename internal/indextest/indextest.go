// Package indextest builds indexes for tests: a mirror (the bundled example site, or the Berkeley corpus) ingested
// into a directory, and a retriever opened over it with the default configuration.
package indextest

import (
	"context"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
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

// shared is the example index Shared builds once per test binary.
var shared struct {
	once sync.Once
	r    *retrieval.Retriever
	tok  *tokenizer.Tokenizer
	err  error
}

// Shared returns a retriever over the bundled example site, built once per test binary into a directory that
// outlives the test that built it, so every test of the binary can share it.
func Shared(tb testing.TB) (*retrieval.Retriever, *tokenizer.Tokenizer) {
	tb.Helper()
	shared.once.Do(func() {
		root, err := os.MkdirTemp("", "ragproxy-example-")
		if err != nil {
			shared.err = err
			return
		}
		sub, _ := fs.Sub(examples.Site, "site")
		site, dir := filepath.Join(root, "site"), filepath.Join(root, "index")
		if shared.err = os.CopyFS(site, sub); shared.err != nil {
			return
		}
		cfg := ingest.Config{Source: site, BaseURL: examples.BaseURL, IndexDir: dir, Logger: slog.New(slog.DiscardHandler)}
		if _, shared.err = ingest.Run(context.Background(), cfg); shared.err != nil {
			return
		}
		if shared.tok, shared.err = tokenizer.New(); shared.err != nil {
			return
		}
		shared.r, shared.err = retrieval.Open(dir, nil, shared.tok, retrieval.Config{})
	})
	if shared.err != nil {
		tb.Fatalf("example index: %v", shared.err)
	}
	return shared.r, shared.tok
}

// The start of fall classes that the example site's academic calendar states, and the date ChangeCalendar
// writes in its place: tests of re-ingest and reload ask for it and see which version answered.
const (
	CalendarStart        = "Monday, August 26, 2024"
	ChangedCalendarStart = "Thursday, August 29, 2024"
)

// ChangeCalendar rewrites the start of fall classes on the academic calendar of an example site copied by
// ExampleSite, from CalendarStart to ChangedCalendarStart.
func ChangeCalendar(tb testing.TB, site string) {
	tb.Helper()
	p := filepath.Join(site, "academic-calendar", "index.html")
	b, err := os.ReadFile(p)
	if err != nil {
		tb.Fatal(err)
	}
	if !strings.Contains(string(b), CalendarStart) {
		tb.Fatalf("the calendar page no longer says %q", CalendarStart)
	}
	if err := os.WriteFile(p, []byte(strings.ReplaceAll(string(b), CalendarStart, ChangedCalendarStart)), 0o644); err != nil {
		tb.Fatal(err)
	}
}
