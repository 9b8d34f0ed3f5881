package grounding

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"

	"github.com/ragproxy/ragproxy/embedding"
	"github.com/ragproxy/ragproxy/retrieval"
)

// DefaultAnalysisBudget is Grounder.AnalysisBudget's default: about what gpt-4o-mini takes to write the JSON
// analysis of a short conversation, so that a follow-up usually gets the model's rewrites and a slow analysis
// costs the visitor at most this much.
const DefaultAnalysisBudget = time.Second

// How a request's analysis was decided, the values of analysisOutcome.How.
const (
	// AnalysisHeuristic: the Grounder has no model analyser; the heuristic analysis is the analysis.
	AnalysisHeuristic = "heuristic"
	// AnalysisStandalone: a first-turn question that stands on its own, retrieved at once from the heuristic
	// analysis without asking the model.
	AnalysisStandalone = "standalone"
	// AnalysisModel: the analyser answered within the budget and its analysis was used.
	AnalysisModel = "model"
	// AnalysisLate: the analyser had not answered within the budget; the retrieval started on the heuristic
	// analysis was used, and the analysis goes on (into the analysis cache) while the request lasts.
	AnalysisLate = "late"
)

// analysisOutcome is what analyseAndRetrieve decided.
type analysisOutcome struct {
	a   retrieval.Analysis
	res *retrieval.Result // nil: no retrieval is needed
	// waited is how long the request waited for its analysis before retrieval could go on.
	waited time.Duration
	how    string
}

// analyseAndRetrieve analyses msgs (already bounded) for the assistant of site and retrieves for them in r,
// without a serial model call where none is needed. h is the heuristic analysis of msgs.
//
//   - Without a model analyser, or for a first-turn question that stands on its own
//     (retrieval.Heuristic.StandsAlone), h is the analysis and retrieval starts at once: the model would have
//     nothing to resolve.
//   - Otherwise the model's analysis runs while retrieval on h runs beside it. If the analysis arrives within
//     AnalysisBudget, it decides: no retrieval, the retrieval on h (the same rewrites, or the analyser fell back
//     to the heuristics), or a retrieval on its rewrites. If it is late, the retrieval on h is the answer's and
//     the analysis carries on, bounded by the request's context and the analyser's own timeout, so that a
//     caching analyser keeps it for the conversation's next turn.
func (g *Grounder) analyseAndRetrieve(ctx context.Context, r *retrieval.Retriever, site string, msgs []retrieval.Message, h retrieval.Analysis) (analysisOutcome, error) {
	analyzer := g.Analyzer
	if _, heuristic := analyzer.(retrieval.Heuristic); analyzer == nil || heuristic {
		res, err := g.retrieveFor(ctx, r, h)
		return analysisOutcome{a: h, res: res, how: AnalysisHeuristic}, err
	}
	if (retrieval.Heuristic{}).StandsAlone(msgs) {
		res, err := g.retrieveFor(ctx, r, h)
		return analysisOutcome{a: h, res: res, how: AnalysisStandalone}, err
	}
	start := time.Now()
	// The request's query vectors are shared by its retrievals: the question, embedded for the retrieval on h,
	// is not embedded again for the model's rewrites, and each rewrite is embedded as soon as the streamed
	// analysis has written it, while the model writes the rest.
	memo := embedding.NewMemo(r.Embedder())
	if rm, err := r.WithEmbedder(memo); err == nil {
		r = rm
	}
	type analysed struct {
		a   retrieval.Analysis
		err error
	}
	got := make(chan analysed, 1) // buffered: a late analysis ends without a reader
	go func() {
		actx, span := g.Tracing.Start(ctx, "analysis model call")
		actx = retrieval.WithSiteLanguages(retrieval.WithSiteName(actx, site), r.Languages())
		actx = retrieval.WithRewriteHook(actx, func(rw string) { memo.Start(ctx, rw) })
		a, err := analyzer.Analyze(actx, msgs)
		span.SetAttributes(attribute.String("ragproxy.analysis.source", a.Source))
		span.End()
		got <- analysed{a, err}
	}()
	type retrieved struct {
		res *retrieval.Result
		err error
	}
	// The retrieval on h runs on r, which the caller releases when it returns: it is waited for on every path.
	sctx, stop := context.WithCancel(ctx)
	spec := make(chan retrieved, 1)
	var wg sync.WaitGroup
	wg.Go(func() {
		res, err := g.retrieveFor(sctx, r, h)
		spec <- retrieved{res, err}
	})
	defer func() {
		stop()
		wg.Wait()
	}()
	budget := g.AnalysisBudget
	if budget <= 0 {
		budget = DefaultAnalysisBudget
	}
	timer := time.NewTimer(budget)
	defer timer.Stop()
	select {
	case o := <-got:
		out := analysisOutcome{a: o.a, waited: time.Since(start), how: AnalysisModel}
		switch {
		case o.err != nil: // analysers fall back on their own; an error is a cancelled request
			return out, fmt.Errorf("analysis: %w", o.err)
		case o.a.Question == "" || !o.a.NeedsRetrieval && !g.Offline:
			return out, nil
		case o.a.Source != "llm" || slices.Equal(o.a.Rewrites, h.Rewrites):
			s := <-spec
			out.res = s.res
			return out, s.err
		}
		stop() // the model's rewrites replace h's
		out.res, o.err = g.retrieveFor(ctx, r, o.a)
		return out, o.err
	case <-timer.C:
		out := analysisOutcome{a: h, waited: time.Since(start), how: AnalysisLate}
		if !g.Offline && (retrieval.Heuristic{}).Chitchat(msgs) {
			// The model would have found no retrieval needed; the heuristics know it too.
			out.a.NeedsRetrieval = false
			return out, nil
		}
		s := <-spec
		out.res = s.res
		return out, s.err
	case <-ctx.Done():
		return analysisOutcome{a: h, how: AnalysisLate}, fmt.Errorf("analysis: %w", ctx.Err())
	}
}

// retrieveFor retrieves in r for an analysis; with tracing, the retrieval and each of its stages are spans, with
// the times the stages measured.
func (g *Grounder) retrieveFor(ctx context.Context, r *retrieval.Retriever, a retrieval.Analysis) (*retrieval.Result, error) {
	start := time.Now()
	res, err := r.RetrieveFor(ctx, a)
	if err != nil {
		return nil, fmt.Errorf("retrieval: %w", err)
	}
	if g.Tracing != nil {
		end := time.Now()
		g.Tracing.Record(ctx, "retrieval", start, end, attribute.Int("ragproxy.rewrites", len(res.Rewrites)),
			attribute.Int("ragproxy.pages", len(res.Pages)), attribute.Int("ragproxy.context_tokens", res.ContextTokens),
			attribute.Bool("ragproxy.empty", res.Empty))
		// The stages run one after another from start; the spans sit side by side under the request's.
		t := start
		for _, stage := range retrieval.Stages() {
			if d, ok := res.Durations[stage]; ok && stage != retrieval.StageAnalysis {
				g.Tracing.Record(ctx, "retrieval "+stage, t, t.Add(d))
				t = t.Add(d)
			}
		}
	}
	return res, nil
}
