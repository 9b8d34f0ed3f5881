package main

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
	"github.com/ragproxy/ragproxy/embedding"
	"github.com/ragproxy/ragproxy/grounding"
	"github.com/ragproxy/ragproxy/index"
	"github.com/ragproxy/ragproxy/ingest"
	"github.com/ragproxy/ragproxy/ingest/summary"
	"github.com/ragproxy/ragproxy/retrieval"
	"github.com/ragproxy/ragproxy/retrieval/faq"
	"github.com/ragproxy/ragproxy/server"
	"github.com/ragproxy/ragproxy/tokenizer"
	"github.com/ragproxy/ragproxy/upstream"
)

// ground loads the index and makes the server answer from it, and returns the admin API's configuration for the
// version it serves.
func (f serveFlags) ground(ctx context.Context, scfg *server.Config, client *upstream.Client, logger *slog.Logger, obs *server.MetricsObserver, analysisCache cache.Cache) (admin.Config, error) {
	tok, err := tokenizer.New()
	if err != nil {
		return admin.Config{}, fmt.Errorf("serve: %w", err)
	}
	var remote embedding.Embedder
	if !f.offline() {
		if remote, err = f.up.openaiEmbedder(); err != nil {
			return admin.Config{}, fmt.Errorf("serve: %w", err)
		}
		if remote != nil {
			// A question's embeddings are one short request: not retried, and given up at --embed-timeout, when
			// retrieval answers from the lexical lists (a key out of quota, a 429 whose Retry-After is minutes
			// away, a 5xx).
			remote = embedding.NewOpenAI(embedding.OpenAIConfig{BaseURL: f.up.url, APIKey: f.up.key, Model: f.up.embeddingModel,
				Dimensions: f.up.embeddingDims, MaxRetries: -1, Timeout: f.embedTimeout})
		}
	}
	open := func(ctx context.Context) (*retrieval.Retriever, func(), error) {
		return f.openVersion(ctx, remote, tok, logger, true)
	}
	r, release, err := f.openVersion(ctx, remote, tok, logger, false)
	if err != nil {
		return admin.Config{}, fmt.Errorf("serve: %w", err)
	}
	name, site := f.assistantName(), f.siteName()
	acfg := admin.Config{Dir: f.index, Live: retrieval.NewLive(r, release), Open: open, Name: name, Logger: logger,
		Metrics: obs.Metrics, ReloadInterval: f.reloadInterval, Edit: f.editConfig, ParseIngest: ingestJob,
		Jobs: f.jobPolicy(), Sync: f.backends.syncer()}
	g := &grounding.Grounder{Retriever: acfg.Live, Tokenizer: tok, SiteName: site, Offline: f.offline(), LinkHosts: splitList(f.linkHosts),
		SourceEvents: f.sourceEvents, OnRetrieval: obs.ObserveRetrieval, AnalysisBudget: f.analysisBudget,
		FAQDirectThreshold: f.faqDirect, FAQEvidenceThreshold: f.faqEvidence, SiteFAQ: f.siteFAQ,
		OnFAQ: func(_ context.Context, kind string) { obs.Metrics.FAQAnswer(kind) }}
	if f.faqFile != "" {
		entries, err := faq.Load(f.faqFile)
		if err != nil {
			return admin.Config{}, fmt.Errorf("serve: --faq: %w", err)
		}
		g.FAQ = faq.NewMatcher(entries)
		logger.Info("faq loaded", "file", f.faqFile, "entries", g.FAQ.Len(), "direct_threshold", f.faqDirect)
	}
	if !f.offline() {
		// Analysis goes through the same client as the answers (timeouts, retries, failover) under its own
		// short deadline.
		analysisModel := cmp.Or(f.analysisModel, f.up.model)
		ask := upstream.Asker{Client: client, Model: analysisModel}.Ask
		g.Analyzer = &retrieval.LLMAnalyzer{Ask: ask, SiteName: site, Timeout: f.analysisTimeout,
			OnFallback: func(err error) {
				// A late analysis (past --analysis-budget) is cancelled when its request ends: nothing fell back.
				if !errors.Is(err, context.Canceled) {
					logger.Warn("query analysis fell back to heuristics", "err", err)
				}
			}}
		if analysisCache != nil {
			ca := grounding.NewCachedAnalyzer(g.Analyzer, analysisCache, analysisModel+"\x00"+name, f.cacheTTL)
			ca.OnLookup = func(result string) { obs.Metrics.Cache("analysis", result) }
			g.Analyzer = ca
		}
	}
	scfg.Grounder = g
	scfg.Models = []server.ModelAlias{{ID: name, Upstream: f.up.model}}
	m := r.Index().Manifest
	obs.Metrics.SetIndexInfo(name, m.Version, m.Embedder, m.Pages, m.Chunks)
	obs.Metrics.SetIndexBuilt(name, m.BuiltAt)
	// Everything besides the request that shapes an answer goes into the response cache key: the Grounder gives
	// the index version (it changes with a re-ingest), the prompt version changes with the prompt or the binary.
	if scfg.RetrievalSettings, err = g.CacheSettings(r.Config(), f.backends.Names(), f.faqDigest(), f.faqSite); err != nil {
		return admin.Config{}, fmt.Errorf("serve: %w", err)
	}
	f.assistants.list.Wire(g, scfg, name, f.up.model)
	scfg.PromptVersion = grounding.PromptVersion(site, version)
	// Loading decodes the index through a lot of short-lived memory (its JSON files above all): give it back now
	// instead of holding it as the heap's headroom for as long as the server runs.
	debug.FreeOSMemory()
	logger.Info("index loaded", "index", f.index, "version", m.Version, "pages", m.Pages, "chunks", m.Chunks,
		"embedder", m.Embedder, "offline", g.Offline, "reload_interval", f.reloadInterval)
	return acfg, nil
}

// retrievalConfig is the retrieval flags' configuration with serve's bound on the query's embeddings.
func (f serveFlags) retrievalConfig() retrieval.Config {
	c := f.retrieval.config()
	c.EmbedTimeout = f.embedTimeout
	return c
}

// editConfig is the ingest configuration of an admin edit: serve's upstream for summaries and embeddings, and
// the versions to keep.
func (f serveFlags) editConfig() (ingest.Config, error) {
	cfg := ingest.Config{Version: version, KeepVersions: f.keepVersions}
	var err error
	if cfg.Embedder, err = f.up.openaiEmbedder(); err != nil {
		return cfg, err
	}
	if f.up.online() {
		ask, err := f.up.ask()
		if err != nil {
			return cfg, err
		}
		cfg.Summarizer = &summary.LLM{Ask: ask, Model: f.up.model}
	}
	return cfg, nil
}

// faqDigest identifies the FAQ's content and thresholds for the response cache key.
func (f serveFlags) faqDigest() string {
	return grounding.FAQDigest(f.faqFile, f.faqDirect, f.faqEvidence)
}

// openVersion loads the index version that CURRENT names, with backends bound to it and the section assistants
// checked against it (see backends.Config.OpenVersion); reload is true while another version serves.
func (f serveFlags) openVersion(ctx context.Context, remote embedding.Embedder, tok *tokenizer.Tokenizer, logger *slog.Logger, reload bool) (*retrieval.Retriever, func(), error) {
	return f.backends.OpenVersion(ctx, f.index, backends.VersionOptions{Remote: remote, Tokenizer: tok, Retrieval: f.retrievalConfig(),
		Check: f.assistants.list.Check, Opened: func(bk retrieval.Backends, ix *index.Index) { f.assistants.list.CheckQdrant(bk, ix, logger) },
		Logger: logger, Reload: reload})
}
