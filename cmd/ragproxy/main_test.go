package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ragproxy/ragproxy/examples"
	"github.com/ragproxy/ragproxy/index"
)

func TestUnknownAndMissingSubcommands(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	ctx := context.Background()
	if err := run(ctx, []string{"frobnicate"}); err == nil || !strings.Contains(err.Error(), "unknown subcommand") {
		t.Errorf("unknown subcommand: err = %v", err)
	}
	if err := run(ctx, nil); err == nil {
		t.Error("no subcommand: want an error")
	}
	if err := run(ctx, []string{"ingest"}); err == nil || !strings.Contains(err.Error(), "SOURCE and --index are required") {
		t.Errorf("ingest without arguments: err = %v", err)
	}
	if err := run(ctx, []string{"stats", "--index", t.TempDir()}); !errors.Is(err, index.ErrNoIndex) {
		t.Errorf("stats on an empty directory: err = %v, want ErrNoIndex", err)
	}
	if err := run(ctx, []string{"ingest", "--help"}); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("ingest --help: err = %v, want flag.ErrHelp", err)
	}
	if err := run(ctx, []string{"ingest", t.TempDir(), "--index", t.TempDir()}); err == nil || !strings.Contains(err.Error(), "--base-url") {
		t.Errorf("mirror without --base-url: err = %v", err)
	}
}

// TestIngestStatsEval runs the commands a site owner runs, on the bundled example site, offline.
func TestIngestStatsEval(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	ctx := context.Background()
	site, idx := t.TempDir(), filepath.Join(t.TempDir(), "lakeshore")
	sub, _ := fs.Sub(examples.Site, "site")
	if err := os.CopyFS(site, sub); err != nil {
		t.Fatal(err)
	}
	questions := filepath.Join(t.TempDir(), "q.jsonl")
	os.WriteFile(questions, examples.Questions, 0o644)
	quiet(t)

	if err := run(ctx, []string{"ingest", site, "--base-url", examples.BaseURL, "--index", idx, "--json"}); err != nil {
		t.Fatal(err)
	}
	m, err := index.LoadManifest(idx)
	if err != nil {
		t.Fatal(err)
	}
	if m.Pages < 20 || m.Embedder == "" || m.Summarizer != "extractive" || m.Source != site {
		t.Errorf("manifest = %+v", m)
	}
	if err := run(ctx, []string{"stats", "--index", idx, "--json"}); err != nil {
		t.Fatal(err)
	}
	if err := run(ctx, []string{"eval", "--index", idx, "--questions", questions, "--min-hit8", "0.9", "--ablations=false"}); err != nil {
		t.Errorf("eval on the example questions: %v", err)
	}
	err = run(ctx, []string{"eval", "--index", idx, "--questions", questions, "--min-mrr", "1.01", "--ablations=false"})
	if err == nil || !strings.Contains(err.Error(), "below the bar") {
		t.Errorf("eval with an unreachable bar: err = %v, want a failure", err)
	}
	// Several sites: one report each, a JSON array of them, and the bar held on each.
	out := filepath.Join(t.TempDir(), "reports.json")
	if err := run(ctx, []string{"eval", "--index", idx, "--questions", questions, "--index", idx, "--questions", questions,
		"--json", out, "--min-hit8", "0.9", "--ablations=false"}); err != nil {
		t.Errorf("eval on two sites: %v", err)
	}
	var reps []struct {
		Index string `json:"index"`
	}
	if b, err := os.ReadFile(out); err != nil {
		t.Error(err)
	} else if err := json.Unmarshal(b, &reps); err != nil || len(reps) != 2 {
		t.Errorf("eval --json on two sites: %d reports (%v), want 2", len(reps), err)
	}
	err = run(ctx, []string{"eval", "--index", idx, "--index", idx, "--questions", questions, "--ablations=false"})
	if err == nil || !strings.Contains(err.Error(), "as many") {
		t.Errorf("eval with two indexes and one question set: err = %v, want a usage error", err)
	}
}

// quiet sends the commands' stdout to a file for the test's duration.
func quiet(t *testing.T) {
	t.Helper()
	f, err := os.CreateTemp(t.TempDir(), "stdout")
	if err != nil {
		t.Fatal(err)
	}
	old := os.Stdout
	os.Stdout = f
	t.Cleanup(func() { os.Stdout = old; f.Close() })
}

func TestServeFlagsCORSOrigins(t *testing.T) {
	f, err := parseServeFlags([]string{"--cors-origins", "http://localhost:3000, https://chat.example.org"})
	if err != nil || len(splitList(f.corsOrigins)) != 2 {
		t.Errorf("valid origins: %v, %q", err, f.corsOrigins)
	}
	if _, err := parseServeFlags([]string{"--cors-origins", "chat.example.org/path"}); err == nil ||
		!strings.Contains(err.Error(), "--cors-origins") {
		t.Errorf("an invalid origin must fail with a clear error, got %v", err)
	}
}
