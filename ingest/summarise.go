package ingest

import (
	"context"
	"fmt"
	"sync"

	"github.com/ragproxy/ragproxy/firsterr"
	"github.com/ragproxy/ragproxy/index"
	"github.com/ragproxy/ragproxy/ingest/summary"
	"github.com/ragproxy/ragproxy/upstream"
	"golang.org/x/sync/errgroup"
)

// summarise writes one line per page: extractive for all, then LLM summaries where a model is configured
// (reused by content hash; a page whose LLM call fails keeps its extractive line).
func (r *run) summarise(ctx context.Context, ix *index.Index) error {
	bar := r.progress.stage("summarised", len(ix.Pages))
	defer bar.done()
	// The pages' markdown is read from disk when asked for; the first read error stops the stage.
	var unread firsterr.Holder
	doc := func(i int) summary.Doc {
		md, err := ix.PageMarkdown(i)
		unread.Keep(err)
		return summary.Doc{Title: ix.Pages[i].Title, Markdown: md}
	}
	failedRead := func() error {
		if err := unread.Err(); err != nil {
			return fmt.Errorf("ingest: summaries: %w", err)
		}
		return nil
	}
	if r.cfg.Summarizer == nil {
		if lines, ok := r.prev.extractiveSummaries(ix, r.settings()); ok {
			// Extractive key terms depend on the whole corpus, so they are reused only when no page changed.
			for i := range ix.Pages {
				ix.Pages[i].Summary = lines[i]
			}
		} else {
			r.extractive(ix, doc)
		}
		bar.add(len(ix.Pages))
		return failedRead()
	}
	model := r.cfg.Summarizer.Model
	if model == "" {
		model = summary.DefaultModel
	}
	sums := &r.report.Summaries
	sums.Model = model
	var todo []int
	for i := range ix.Pages {
		p := &ix.Pages[i]
		if s, ok := r.prev.llmSummary(p.Hash, model); ok {
			p.Summary, p.SummaryModel = s, model
			sums.FromModel++
			sums.Reused++
			bar.add(1)
			continue
		}
		todo = append(todo, i)
	}
	if len(todo) == 0 {
		return nil
	}
	// Every page gets an extractive line first: it stays where the LLM call fails.
	lines := summary.ExtractiveFunc(len(ix.Pages), doc, r.cfg.Summary)
	for _, i := range todo {
		ix.Pages[i].Summary = lines[i]
	}
	if err := failedRead(); err != nil {
		return err
	}
	limit := r.cfg.SummaryConcurrency
	if limit <= 0 {
		limit = 4
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(limit)
	var mu sync.Mutex
	failed, asked := 0, 0
	var lastErr error
	for _, i := range todo {
		p := &ix.Pages[i]
		g.Go(func() error {
			defer bar.add(1)
			d := doc(i)
			if err := failedRead(); err != nil {
				return err
			}
			// A summary paid for by an earlier run that did not finish (or by a version since removed) is
			// in the ledger under what determines it.
			key := summaryKey(r.cfg.Summarizer, model, d)
			if s, ok := r.paid.summary(key); ok {
				mu.Lock()
				p.Summary, p.SummaryModel = s, model
				sums.FromModel++
				sums.Kept++
				mu.Unlock()
				return nil
			}
			// A stage that stopped (a spent quota, a refused key) asks no more; a request sent is seen through on
			// the caller's context, since the upstream bills one it has begun to answer and its summary goes to
			// the ledger, which the next run reads instead of paying again.
			if gctx.Err() != nil {
				return gctx.Err()
			}
			s, use, err := r.cfg.Summarizer.Summarize(ctx, d)
			r.paid.addSummaryUsage(model, use.Prompt, use.Completion)
			mu.Lock()
			asked++
			mu.Unlock()
			if err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				if upstream.Fatal(err) {
					// No retry clears it and every other page would fail the same way: stop the stage.
					return err
				}
				mu.Lock()
				failed++
				lastErr = err
				mu.Unlock()
				r.cfg.Logger.Warn("LLM summary failed; keeping the extractive one", "url", p.URL, "err", err)
				return nil
			}
			if err := r.paid.putSummary(key, s); err != nil {
				return err
			}
			mu.Lock()
			p.Summary, p.SummaryModel = s, model
			sums.FromModel++
			mu.Unlock()
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return fmt.Errorf("ingest: summaries: %w", err)
	}
	sums.Fallback = failed
	if failed > 0 {
		r.cfg.Logger.Warn("LLM summaries failed", "pages", failed, "of", asked)
	}
	// The line: more than half of the pages asked about failed. A few failures leave a few extractive lines,
	// which the next run asks about again; most failing means the model path does not work (a wrong model, a
	// limit that never clears), and an index of fallbacks would hide it.
	if failed*2 > asked {
		return fmt.Errorf("ingest: summaries: %d of %d pages asked of %s failed, over half: %w (last error: %v)",
			failed, asked, model, ErrModelSummaries, lastErr)
	}
	return nil
}

func (r *run) extractive(ix *index.Index, doc func(i int) summary.Doc) {
	lines := summary.ExtractiveFunc(len(ix.Pages), doc, r.cfg.Summary)
	for i := range ix.Pages {
		ix.Pages[i].Summary = lines[i]
	}
}
