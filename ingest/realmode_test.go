package ingest

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ragproxy/ragproxy/compat/openaitest"
	"github.com/ragproxy/ragproxy/embedding"
	"github.com/ragproxy/ragproxy/ingest/summary"
	"github.com/ragproxy/ragproxy/upstream"
)

// These tests run ingest as an operator with an API key would, against the stand-in that enforces OpenAI's
// limits: a quota that runs out, a tokens-per-minute limit, the embeddings caps. The stand-in and the pacer share
// a clock that a wait advances, so no test waits in real time.

// fakeClock is a clock that Sleep moves forward.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
	return ctx.Err()
}

const realKey = "sk-real-mode-test"

// realMode is the upstream side of an ingest with a key: the stand-in, and the summarizer and embedder that
// share one pacer, as cmd/ragproxy wires them.
type realMode struct {
	srv   *openaitest.Server
	clock *fakeClock
	pacer *upstream.Pacer
}

func newRealMode(t *testing.T, limits openaitest.Limits) *realMode {
	clock := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	srv := openaitest.NewServer(openaitest.Config{APIKey: realKey, Reply: summaryReply, Limits: limits, Now: clock.Now})
	t.Cleanup(srv.Close)
	return &realMode{srv: srv, clock: clock,
		pacer: upstream.NewPacer(upstream.PacerConfig{Now: clock.Now, Sleep: clock.Sleep})}
}

// config sets the summarizer and embedder (batchTokens 0: the embedder's default).
func (m *realMode) config(t *testing.T, batchTokens int) func(*Config) {
	return func(c *Config) {
		cl, err := upstream.New(upstream.Config{Retries: -1, Primary: upstream.Endpoint{BaseURL: m.srv.URL(),
			APIKey: realKey, Model: summary.DefaultModel, Pacer: m.pacer}})
		if err != nil {
			t.Fatal(err)
		}
		c.Summarizer = &summary.LLM{Ask: upstream.Asker{Client: cl}.Ask}
		c.Embedder = embedding.NewOpenAI(embedding.OpenAIConfig{BaseURL: m.srv.URL(), APIKey: realKey,
			Model: "text-embedding-3-small", BatchTokens: batchTokens, MaxRetries: -1, Pacer: m.pacer})
	}
}

// wideSite is n pages of a few hundred words each, linked in a ring.
func wideSite(n int) map[string]string {
	files := map[string]string{}
	topics := []string{"physics", "chemistry", "biology", "geology", "history", "music", "law", "medicine"}
	for i := range n {
		name := fmt.Sprintf("p%02d/index.html", i)
		if i == 0 {
			name = "index.html"
		}
		files[name] = page(fmt.Sprintf("Page %d", i), topics[i%len(topics)]+fmt.Sprint(i),
			fmt.Sprintf("/p%02d/", (i+1)%n), fmt.Sprintf("/p%02d/", (i+7)%n))
	}
	return files
}

func TestQuotaRunsOutMidEmbeddingThenRerunPaysOnlyTheRest(t *testing.T) {
	src := writeSite(t, t.TempDir(), wideSite(24))
	const batchTokens = 1500 // many small embeddings requests, so that the quota runs out among them

	// A full run, to know what the site costs.
	full := newRealMode(t, openaitest.Limits{})
	fullRep := ingestSite(t, src, filepath.Join(t.TempDir(), "ix"), full.config(t, batchTokens))
	fullTokens := full.srv.Stats().TotalTokens()
	chatTokens := full.srv.Stats().Tokens[openaitest.Billed{Endpoint: "chat/completions", Model: summary.DefaultModel}]
	if fullTokens == 0 || chatTokens == 0 || chatTokens > fullTokens*7/10 {
		t.Fatalf("a full run billed %d tokens, %d of them for summaries: the quota would not run out mid-embedding", fullTokens, chatTokens)
	}

	// The quota runs out at 70% of that, during the embeddings.
	m := newRealMode(t, openaitest.Limits{Quota: fullTokens * 7 / 10})
	dir := filepath.Join(t.TempDir(), "ix")
	cfg := Config{Source: src, BaseURL: siteBase, IndexDir: dir, Logger: quiet()}
	m.config(t, batchTokens)(&cfg)
	_, err := Run(context.Background(), cfg)
	if err == nil || !upstream.Fatal(err) || !strings.Contains(err.Error(), "insufficient_quota") ||
		!strings.Contains(err.Error(), "ledger") {
		t.Fatalf("Run = %v, want a spent quota, named, with what the ledger keeps", err)
	}
	first := m.srv.Stats()
	if q := first.Refused["insufficient_quota"]; q == 0 || q > 2 {
		t.Errorf("%d requests refused for the quota, want 1 or 2 (no retries of a spent quota; a concurrent request may meet it too)", q)
	}

	// Credit is added; the re-run pays only for what is missing.
	m.srv.SetLimits("", openaitest.Limits{})
	m2 := &realMode{srv: m.srv, clock: m.clock, pacer: upstream.NewPacer(upstream.PacerConfig{Now: m.clock.Now, Sleep: m.clock.Sleep})}
	rep := ingestSite(t, src, dir, m2.config(t, batchTokens))
	rerun := m.srv.Stats().TotalTokens() - first.TotalTokens()
	paid := first.TotalTokens()
	t.Logf("full run %d tokens; first run paid %d (%.0f%%) before the quota ran out; the re-run paid %d (%.0f%% of a full run); kept %d summaries, %d vectors",
		fullTokens, paid, 100*float64(paid)/float64(fullTokens), rerun, 100*float64(rerun)/float64(fullTokens),
		rep.Summaries.Kept, rep.KeptVectors)
	if rerun > fullTokens-paid {
		t.Errorf("the re-run paid %d tokens, more than the %d the first run left unpaid: work was paid twice", rerun, fullTokens-paid)
	}
	if rerun*100 > fullTokens*30 {
		t.Errorf("the re-run paid %d tokens, %.0f%% of a full run's %d; want <= 30%%", rerun, 100*float64(rerun)/float64(fullTokens), fullTokens)
	}
	if rep.Summaries.FromModel != rep.Pages || rep.Summaries.Kept != rep.Pages || rep.Pages != fullRep.Pages {
		t.Errorf("re-run summaries %+v for %d pages: want every one from the model, kept from the first run", rep.Summaries, rep.Pages)
	}
	// The next run of an unchanged site pays nothing at all.
	before := m.srv.Stats().TotalTokens()
	ingestSite(t, src, dir, m2.config(t, batchTokens))
	if n := m.srv.Stats().TotalTokens() - before; n != 0 {
		t.Errorf("an unchanged re-ingest paid %d tokens", n)
	}
}

func TestTPMLimitWithOnlyRateLimitHeaders(t *testing.T) {
	src := writeSite(t, t.TempDir(), wideSite(24))
	// A limit well under the run's tokens, answered with x-ratelimit-* headers and no Retry-After.
	m := newRealMode(t, openaitest.Limits{TPM: 6000, RPM: 60})
	start := m.clock.Now()
	rep := ingestSite(t, src, filepath.Join(t.TempDir(), "ix"), m.config(t, 0))
	st := m.srv.Stats()
	t.Logf("%d pages, %d tokens billed, %d refusals %v, %s waited on the stand-in's clock",
		rep.Pages, st.TotalTokens(), len(st.Refused), st.Refused, m.clock.Now().Sub(start))
	if rep.Summaries.FromModel != rep.Pages || rep.Summaries.Fallback != 0 {
		t.Errorf("summaries %+v for %d pages: want every one from the model", rep.Summaries, rep.Pages)
	}
	if st.TotalTokens() <= 6000 || m.pacer.Waited() == 0 {
		t.Errorf("%d tokens billed, %s waited: the limit was never met", st.TotalTokens(), m.pacer.Waited())
	}
	for _, u := range rep.Usage {
		if u.PromptTokens == 0 || !u.Priced || u.CostUSD <= 0 {
			t.Errorf("usage %+v: want tokens and a cost", u)
		}
	}
}

func TestNonLatinSiteStaysUnderTheEmbeddingsCaps(t *testing.T) {
	// Hindi counts far more tokens in cl100k (what text-embedding-3 counts) than in o200k (what chunks are cut
	// by): 60 pages of about 12 KB of Devanagari are more than one request may hold.
	para := "भारतीय विश्वविद्यालय में प्रवेश के लिए छात्रों को आवेदन पत्र, शुल्क और आवश्यक दस्तावेज़ जमा करने होते हैं। "
	files := map[string]string{}
	for i := range 60 {
		var b strings.Builder
		fmt.Fprintf(&b, "<html><head><title>पृष्ठ %d</title></head><body><main><h1>पृष्ठ %d</h1>", i, i)
		for j := range 12 {
			fmt.Fprintf(&b, "<h2>खंड %d</h2><p>%s</p>", j, strings.Repeat(para, 5))
		}
		fmt.Fprintf(&b, `<p><a href="/p%02d/">अगला</a></p></main></body></html>`, (i+1)%60)
		name := fmt.Sprintf("p%02d/index.html", i)
		if i == 0 {
			name = "index.html"
		}
		files[name] = b.String()
	}
	src := writeSite(t, t.TempDir(), files)
	m := newRealMode(t, openaitest.Limits{})
	rep := ingestSite(t, src, filepath.Join(t.TempDir(), "ix"), m.config(t, 0))
	st := m.srv.Stats()
	var embedTokens int
	for k, v := range st.Tokens {
		if k.Endpoint == "embeddings" {
			embedTokens += v
		}
	}
	t.Logf("%d pages, %d chunks; %d embeddings tokens (cl100k) in %d requests; refusals %v", rep.Pages, rep.Chunks,
		embedTokens, st.Served["embeddings"], st.Refused)
	if len(st.Refused) != 0 {
		t.Errorf("the stand-in refused requests: %v", st.Refused)
	}
	if embedTokens <= 300_000 || st.Served["embeddings"] < 2 {
		t.Errorf("%d embeddings tokens in %d requests: the site does not test the per-request cap", embedTokens, st.Served["embeddings"])
	}
	if rep.Summaries.FromModel != rep.Pages {
		t.Errorf("summaries %+v for %d pages", rep.Summaries, rep.Pages)
	}
}

func TestSpentQuotaStopsTheSummariesAtOnce(t *testing.T) {
	src := writeSite(t, t.TempDir(), wideSite(24))
	for _, tt := range []struct {
		name   string
		limits openaitest.Limits
		key    string
		code   string
	}{
		{"quota spent after a few pages", openaitest.Limits{Quota: 1000}, realKey, "insufficient_quota"},
		{"wrong key", openaitest.Limits{}, "sk-wrong-key-for-test", "invalid_api_key"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := newRealMode(t, tt.limits)
			dir := filepath.Join(t.TempDir(), "ix")
			cfg := Config{Source: src, BaseURL: siteBase, IndexDir: dir, Logger: quiet()}
			m.config(t, 0)(&cfg)
			cl, err := upstream.New(upstream.Config{Primary: upstream.Endpoint{BaseURL: m.srv.URL(), APIKey: tt.key,
				Model: summary.DefaultModel, Pacer: m.pacer}})
			if err != nil {
				t.Fatal(err)
			}
			cfg.Summarizer = &summary.LLM{Ask: upstream.Asker{Client: cl}.Ask}
			_, err = Run(context.Background(), cfg)
			st := m.srv.Stats()
			asked := chatRequests(m.srv)
			t.Logf("error: %v\n%d summary requests for 24 pages, %d served, refusals %v", err, asked, st.Served["chat/completions"], st.Refused)
			if !upstream.Fatal(err) || !strings.Contains(err.Error(), tt.code) {
				t.Fatalf("Run = %v, want the refusal %s, named", err, tt.code)
			}
			// The refusal stops the stage: the pages in flight when it came (SummaryConcurrency 4) are the
			// only others asked, and none is retried.
			if refused := st.Refused[tt.code]; refused > 4 || asked-st.Served["chat/completions"] != refused {
				t.Errorf("%d requests refused, %d asked, %d served: want at most 4 refused and no other request", refused, asked, st.Served["chat/completions"])
			}
			if st.Served["embeddings"] != 0 {
				t.Errorf("%d embeddings requests after the summaries stopped", st.Served["embeddings"])
			}
			if tt.key != realKey {
				return
			}
			// With credit added, the next run asks only for the summaries not served: those answered while the
			// refusal came were paid for, and kept.
			m.srv.SetLimits("", openaitest.Limits{})
			// A new process: the old one's pacer remembers the spent key.
			m2 := &realMode{srv: m.srv, clock: m.clock, pacer: upstream.NewPacer(upstream.PacerConfig{Now: m.clock.Now, Sleep: m.clock.Sleep})}
			m2.config(t, 0)(&cfg)
			if _, err := Run(context.Background(), cfg); err != nil {
				t.Fatal(err)
			}
			if again := chatRequests(m.srv) - asked; again != 24-st.Served["chat/completions"] {
				t.Errorf("the next run asked %d summaries, want the %d not served before", again, 24-st.Served["chat/completions"])
			}
		})
	}
}
