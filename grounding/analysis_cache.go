package grounding

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/ragproxy/ragproxy/cache"
	"github.com/ragproxy/ragproxy/retrieval"
)

// CachedAnalyzer keeps query analyses in a cache, keyed by the analysis
// model and the last retrieval.AnalysisWindow messages (all the analyzer
// reads), so a repeated conversation skips the model call; concurrent
// identical analyses make one call. Only the model's own analyses are kept:
// a heuristic fallback (the model failed) is used once and retried next
// time. It is safe for concurrent use.
type CachedAnalyzer struct {
	analyzer retrieval.Analyzer
	model    string
	group    *cache.Group
	// OnLookup, if set, sees each lookup's result: "hit" or "miss".
	OnLookup func(result string)
}

var _ retrieval.Analyzer = (*CachedAnalyzer)(nil)

// NewCachedAnalyzer wraps a with cache c (wrap a networked cache in a
// cache.Tolerant); model names the analysis model; ttl <= 0 keeps entries
// without expiry.
func NewCachedAnalyzer(a retrieval.Analyzer, c cache.Cache, model string, ttl time.Duration) *CachedAnalyzer {
	return &CachedAnalyzer{analyzer: a, model: model, group: &cache.Group{Cache: c, TTL: ttl}}
}

// Analyze implements retrieval.Analyzer.
func (ca *CachedAnalyzer) Analyze(ctx context.Context, msgs []retrieval.Message) (retrieval.Analysis, error) {
	window := msgs[max(0, len(msgs)-retrieval.AnalysisWindow):]
	key := cache.Key("ragproxy-analysis-v2", ca.model, retrieval.SiteNameOf(ctx), window)
	if rule := retrieval.RewriteLanguageRule(retrieval.SiteLanguagesOf(ctx)); rule != "" {
		// The rewrites of a site in other languages are in its languages.
		key = cache.Key("ragproxy-analysis-v2", ca.model, retrieval.SiteNameOf(ctx), window, rule)
	}
	val, outcome, err := ca.group.Do(ctx, key, func(ctx context.Context) ([]byte, bool, error) {
		a, err := ca.analyzer.Analyze(ctx, msgs)
		if err != nil {
			return nil, false, err
		}
		b, err := json.Marshal(a)
		if err != nil {
			return nil, false, fmt.Errorf("analysis cache: %w", err)
		}
		return b, a.Source == "llm", nil
	})
	if err != nil {
		return retrieval.Analysis{}, err
	}
	if ca.OnLookup != nil {
		if outcome == cache.Hit {
			ca.OnLookup("hit")
		} else {
			ca.OnLookup("miss")
		}
	}
	var a retrieval.Analysis
	if err := json.Unmarshal(val, &a); err != nil {
		return ca.analyzer.Analyze(ctx, msgs) // an unreadable entry is a miss
	}
	return a, nil
}
