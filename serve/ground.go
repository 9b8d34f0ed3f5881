package serve

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"

	"github.com/ragproxy/ragproxy/admin"
	"github.com/ragproxy/ragproxy/backends"
	"github.com/ragproxy/ragproxy/cache"
	"github.com/ragproxy/ragproxy/grounding"
	"github.com/ragproxy/ragproxy/index"
	"github.com/ragproxy/ragproxy/observability"
	"github.com/ragproxy/ragproxy/retrieval"
	"github.com/ragproxy/ragproxy/retrieval/faq"
	"github.com/ragproxy/ragproxy/server"
	"github.com/ragproxy/ragproxy/tokenizer"
	"github.com/ragproxy/ragproxy/upstream"
)

// ground loads the index and makes the server answer from it, and returns the admin API's configuration for the
// version it serves.
func (c *Config) ground(ctx context.Context, scfg *server.Config, client *upstream.Client, logger *slog.Logger,
	obs *server.MetricsObserver, analysisCache cache.Cache, tracing *observability.Tracing) (admin.Config, error) {
	tok, err := tokenizer.New()
	if err != nil {
		return admin.Config{}, fmt.Errorf("serve: %w", err)
	}
	open := func(ctx context.Context) (*retrieval.Retriever, func(), error) {
		return OpenVersion(ctx, *c, tok, logger, true)
	}
	r, release, err := OpenVersion(ctx, *c, tok, logger, false)
	if err != nil {
		return admin.Config{}, fmt.Errorf("serve: %w", err)
	}
	name, site, gc := c.AssistantName(), c.siteName(), c.Grounding
	acfg := admin.Config{Dir: c.Index, Live: retrieval.NewLive(r, release), Open: open, Name: name, Logger: logger,
		Metrics: obs.Metrics, ReloadInterval: c.Admin.ReloadInterval, Edit: c.Admin.Edit, ParseIngest: c.Admin.ParseIngest,
		Jobs: c.Admin.Jobs, Sync: Syncer(c.Backends)}
	g := &grounding.Grounder{Retriever: acfg.Live, Tokenizer: tok, SiteName: site, Offline: c.Offline, LinkHosts: gc.LinkHosts,
		SourceEvents: gc.SourceEvents, OnRetrieval: obs.ObserveRetrieval, AnalysisBudget: gc.AnalysisBudget,
		FAQDirectThreshold: gc.FAQDirect, FAQEvidenceThreshold: gc.FAQEvidence, SiteFAQ: gc.SiteFAQ, Tracing: tracing,
		OnFAQ: func(_ context.Context, kind string) { obs.Metrics.FAQAnswer(kind) }}
	var entries []faq.Entry
	if gc.FAQFile != "" {
		if entries, err = faq.Load(gc.FAQFile); err != nil {
			return admin.Config{}, fmt.Errorf("serve: --faq: %w", err)
		}
	}
	// The file's entries, and those the admin API adds while serving (see wireInsights).
	g.LiveFAQ = grounding.NewLiveFAQ(entries, r.Languages()[0])
	if gc.FAQFile != "" {
		logger.Info("faq loaded", "file", gc.FAQFile, "entries", g.LiveFAQ.Matcher().Len(), "direct_threshold", gc.FAQDirect)
	}
	if !c.Offline {
		// Analysis goes through the same client as the answers (timeouts, retries, failover) under its own
		// short deadline.
		analysisModel := cmp.Or(gc.AnalysisModel, c.Upstream.Primary.Model)
		ask := upstream.Asker{Client: client, Model: analysisModel}.Ask
		g.Analyzer = &retrieval.LLMAnalyzer{Ask: ask, SiteName: site, Timeout: gc.AnalysisTimeout,
			OnFallback: func(err error) {
				// A late analysis (past the analysis budget) is cancelled when its request ends: nothing fell back.
				if !errors.Is(err, context.Canceled) {
					logger.Warn("query analysis fell back to heuristics", "err", err)
				}
			}}
		if analysisCache != nil {
			ca := grounding.NewCachedAnalyzer(g.Analyzer, analysisCache, analysisModel+"\x00"+name, scfg.CacheTTL)
			ca.OnLookup = func(result string) { obs.Metrics.Cache("analysis", result) }
			g.Analyzer = ca
		}
	}
	scfg.Grounder = g
	scfg.Models = []server.ModelAlias{{ID: name, Upstream: c.Upstream.Primary.Model}}
	m := r.Index().Manifest
	obs.Metrics.SetIndexInfo(name, m.Version, m.Embedder, m.Pages, m.Chunks)
	obs.Metrics.SetIndexBuilt(name, m.BuiltAt)
	// Everything besides the request that shapes an answer goes into the response cache key: the Grounder gives
	// the index version (it changes with a re-ingest), the prompt version changes with the prompt or the binary.
	faqDigest := grounding.FAQDigest(gc.FAQFile, gc.FAQDirect, gc.FAQEvidence)
	if scfg.RetrievalSettings, err = g.CacheSettings(r.Config(), c.Backends.Names(), faqDigest, gc.FAQSite); err != nil {
		return admin.Config{}, fmt.Errorf("serve: %w", err)
	}
	c.Assistants.Wire(g, scfg, name, c.Upstream.Primary.Model)
	scfg.PromptVersion = grounding.PromptVersion(site, c.Version)
	// Loading decodes the index through a lot of short-lived memory (its JSON files above all): give it back now
	// instead of holding it as the heap's headroom for as long as the server runs.
	debug.FreeOSMemory()
	logger.Info("index loaded", "index", c.Index, "version", m.Version, "pages", m.Pages, "chunks", m.Chunks,
		"embedder", m.Embedder, "offline", g.Offline, "reload_interval", c.Admin.ReloadInterval)
	return acfg, nil
}

// OpenVersion loads the index version that c.Index's CURRENT names, with c.Embedder for the questions, the
// backends bound to it and the section assistants checked against it (see backends.Config.OpenVersion); reload
// is true while another version serves.
func OpenVersion(ctx context.Context, c Config, tok *tokenizer.Tokenizer, logger *slog.Logger, reload bool) (*retrieval.Retriever, func(), error) {
	return c.Backends.OpenVersion(ctx, c.Index, backends.VersionOptions{Remote: c.Embedder, Tokenizer: tok, Retrieval: c.Retrieval,
		Check: c.Assistants.Check, Opened: func(bk retrieval.Backends, ix *index.Index) { c.Assistants.CheckQdrant(bk, ix, logger) },
		Logger: logger, Reload: reload})
}

// Syncer is the sync of the configured backends after an ingest, nil when none is.
func Syncer(b backends.Config) func(context.Context, string) (*backends.SyncReport, error) {
	if !b.Configured() {
		return nil
	}
	return b.Sync
}
