package ingest

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ragproxy/ragproxy/compat/openaitest"
	"github.com/ragproxy/ragproxy/index"
	"github.com/ragproxy/ragproxy/ingest/summary"
	"github.com/ragproxy/ragproxy/upstream"
)

// summaryReply answers a summary request with one line naming the page's title, as a model would.
func summaryReply(r *openaitest.Request) openaitest.Reply {
	for _, m := range r.Messages {
		if m.Role == "user" {
			title, _, _ := strings.Cut(strings.TrimPrefix(m.Text(), "Title: "), "\n")
			return openaitest.Reply{Content: "LLM summary of the " + title + " page."}
		}
	}
	return openaitest.Reply{Content: "no page"}
}

func llmSummarizer(t testing.TB, srv *openaitest.Server) *summary.LLM {
	c, err := upstream.New(upstream.Config{Retries: -1,
		Primary: upstream.Endpoint{BaseURL: srv.URL(), APIKey: "test-key", Model: summary.DefaultModel}})
	if err != nil {
		t.Fatal(err)
	}
	return &summary.LLM{Ask: upstream.Asker{Client: c}.Ask}
}

func chatRequests(srv *openaitest.Server) int {
	n := 0
	for _, r := range srv.Requests() {
		if strings.HasSuffix(r.Path, "/chat/completions") {
			n++
		}
	}
	return n
}

func TestFailingLLMKeepsExtractiveSummaries(t *testing.T) {
	srv := openaitest.NewServer(openaitest.Config{Reply: summaryReply})
	defer srv.Close()
	srv.Fail(openaitest.Fault{Status: 500}) // one page of four: under half, so the run goes on
	src := writeSite(t, t.TempDir(), smallSite())

	extractive := load(t, func() string {
		d := filepath.Join(t.TempDir(), "ix")
		ingestSite(t, src, d, nil)
		return d
	}())
	dir := filepath.Join(t.TempDir(), "ix")
	rep := ingestSite(t, src, dir, func(c *Config) { c.Summarizer = llmSummarizer(t, srv) })
	if rep.Pages != 4 || rep.Summaries.FromModel != 3 || rep.Summaries.Fallback != 1 {
		t.Fatalf("report %+v, want 4 pages, 3 summaries from the model and 1 fallback", rep)
	}
	if n := chatRequests(srv); n != rep.Pages {
		t.Errorf("%d summary calls for %d pages", n, rep.Pages)
	}
	ix := load(t, dir)
	fallbacks := 0
	for i, p := range ix.Pages {
		if p.SummaryModel == "" {
			fallbacks++
			if want := extractive.Pages[i].Summary; p.Summary != want || p.Summary == "" {
				t.Errorf("page %s summary %q, want the extractive %q", p.URL, p.Summary, want)
			}
		}
	}
	if st := index.ComputeStats(ix); fallbacks != 1 || st.ModelSummaries != 3 || st.FallbackSummaries != 1 {
		t.Errorf("%d pages kept the extractive line; stats say %d from the model, %d fallbacks; want 1, 3, 1",
			fallbacks, st.ModelSummaries, st.FallbackSummaries)
	}
}

func TestMostSummariesFailingFailsTheRun(t *testing.T) {
	srv := openaitest.NewServer(openaitest.Config{Reply: summaryReply})
	defer srv.Close()
	srv.FailAlways(&openaitest.Fault{Status: 500})
	src := writeSite(t, t.TempDir(), smallSite())
	dir := filepath.Join(t.TempDir(), "ix")
	_, err := Run(context.Background(), Config{Source: src, BaseURL: siteBase, IndexDir: dir, Logger: quiet(),
		Summarizer: llmSummarizer(t, srv)})
	if !errors.Is(err, ErrModelSummaries) {
		t.Fatalf("Run = %v, want ErrModelSummaries", err)
	}
	if _, err := index.Load(dir); !errors.Is(err, index.ErrNoIndex) {
		t.Errorf("a run whose summaries failed wrote an index (Load: %v)", err)
	}
}

func TestLLMSummariesAreReused(t *testing.T) {
	srv := openaitest.NewServer(openaitest.Config{Reply: summaryReply})
	defer srv.Close()
	src := writeSite(t, t.TempDir(), smallSite())
	dir := filepath.Join(t.TempDir(), "ix")
	withLLM := func(c *Config) { c.Summarizer = llmSummarizer(t, srv) }

	first := ingestSite(t, src, dir, withLLM)
	if n := chatRequests(srv); n != first.Pages {
		t.Fatalf("first run made %d summary calls for %d pages", n, first.Pages)
	}
	ix := load(t, dir)
	if ix.Manifest.Summarizer != "gpt-4o-mini" {
		t.Errorf("manifest summarizer %q", ix.Manifest.Summarizer)
	}
	for _, p := range ix.Pages {
		if want := "LLM summary of the " + p.Title + " page."; p.Summary != want {
			t.Errorf("page %s summary %q, want %q", p.URL, p.Summary, want)
		}
	}

	second := ingestSite(t, src, dir, withLLM)
	if n := chatRequests(srv); n != first.Pages {
		t.Errorf("re-ingest of an unchanged site made %d summary calls", n-first.Pages)
	}
	if second.Version != first.Version || second.Reused != second.Pages {
		t.Errorf("re-ingest: %+v, first version %s", second, first.Version)
	}
}

// TestFailedLLMSummariesAreAskedAgain checks that an extractive line kept because the model failed is not reused
// as if the model had written it: the next ingest asks for those pages again.
func TestFailedLLMSummariesAreAskedAgain(t *testing.T) {
	srv := openaitest.NewServer(openaitest.Config{Reply: summaryReply})
	defer srv.Close()
	src := writeSite(t, t.TempDir(), smallSite())
	dir := filepath.Join(t.TempDir(), "ix")
	withLLM := func(c *Config) { c.Summarizer = llmSummarizer(t, srv) }

	srv.Fail(openaitest.Fault{Status: 500}) // the first page's call fails
	first := ingestSite(t, src, dir, withLLM)
	failed := 0
	for _, p := range load(t, dir).Pages {
		if p.SummaryModel == "" {
			failed++
		}
	}
	if failed != 1 {
		t.Fatalf("%d pages without an LLM summary after one failed call, want 1", failed)
	}

	calls := chatRequests(srv)
	second := ingestSite(t, src, dir, withLLM)
	if n := chatRequests(srv) - calls; n != 1 {
		t.Errorf("re-ingest made %d summary calls, want 1 (the page whose call failed)", n)
	}
	for _, p := range load(t, dir).Pages {
		if want := "LLM summary of the " + p.Title + " page."; p.Summary != want || p.SummaryModel != "gpt-4o-mini" {
			t.Errorf("page %s summary %q by %q, want %q by gpt-4o-mini", p.URL, p.Summary, p.SummaryModel, want)
		}
	}
	if second.Version == first.Version {
		t.Errorf("the version did not change although a summary did")
	}
}
