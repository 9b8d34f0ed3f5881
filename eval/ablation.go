package eval

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/ragproxy/ragproxy/retrieval"
)

// Variant is one retrieval configuration in an ablation.
type Variant struct {
	Name   string           `json:"name"`
	Config retrieval.Config `json:"-"`
	// Heuristic rewrites are off when NoRewrites is set in Config.
}

// Ablations are the FHNW prototype's system versions, generalised, plus the fusion constants worth comparing.
// base supplies the constants the variants do not change.
func Ablations(base retrieval.Config) []Variant {
	with := func(f func(c *retrieval.Config)) retrieval.Config {
		c := base
		f(&c)
		return c
	}
	vs := []Variant{
		{"chunks only", with(func(c *retrieval.Config) {
			c.LinkPrior = -1
			c.PageLists = []string{retrieval.ListChunkDense}
			c.NoRewrites, c.NoCommunities = true, true
		})},
		{"+ rewrites", with(func(c *retrieval.Config) {
			c.LinkPrior = -1
			c.PageLists = []string{retrieval.ListChunkDense}
			c.NoCommunities = true
		})},
		{"+ summaries", with(func(c *retrieval.Config) {
			c.LinkPrior = -1
			c.PageLists = []string{retrieval.ListSummaryDense}
			c.NoCommunities = true
		})},
		{"complete", with(func(c *retrieval.Config) {
			c.LinkPrior = -1
			c.PageLists = []string{retrieval.ListSummaryDense}
		})},
		{"complete + BM25", with(func(c *retrieval.Config) {
			c.LinkPrior = -1
			c.PageLists = []string{retrieval.ListSummaryDense, retrieval.ListPageBM25}
		})},
		{"complete + BM25 + chunk and title lists", with(func(c *retrieval.Config) {
			c.PageLists = retrieval.DefaultPageLists
			c.LinkPrior = -1
		})},
		{"+ link prior (default)", with(func(c *retrieval.Config) {
			c.PageLists = retrieval.DefaultPageLists
		})},
		{"default, equal list weights", with(func(c *retrieval.Config) {
			c.ListWeights = map[string]float64{}
		})},
		{"default, FHNW prototype community rule (no protected pages)", with(func(c *retrieval.Config) { c.ProtectPages = -1 })},
		{"default, usual RRF (K = 60, ranks from 1)", with(func(c *retrieval.Config) {
			c.RRFK, c.RRFRankBase = 60, 1
		})},
		{"default, no communities", with(func(c *retrieval.Config) { c.NoCommunities = true })},
		{"default, no WordNet (synonyms, bases of comparatives, related words in passages)", with(func(c *retrieval.Config) { c.NoWordNet = true })},
		{"default, no passage reranking", with(func(c *retrieval.Config) { c.NoPassageRerank = true })},
		{"default, no passage prior on pages", with(func(c *retrieval.Config) { c.PassagePrior = -1 })},
		{"default, no second vote for a BM25 list's leading page", with(func(c *retrieval.Config) { c.LeadRatio = -1 })},
		{"default, passage windows across sections", with(func(c *retrieval.Config) { c.NoSectionPassages = true })},
		{"default, no quantities in passages", with(func(c *retrieval.Config) { c.NoQuantities = true })},
		// The signals of the answer written without a model (retrieval.Retriever.Evidence), each off in turn:
		// they move only the answer columns.
		{"default, answers without answer kinds", with(func(c *retrieval.Config) { c.EvidenceOff.Kinds = true })},
		{"default, answers without heading, title and topic context", with(func(c *retrieval.Config) { c.EvidenceOff.Context = true })},
		{"default, answers without the number, definition, default and bound shapes", with(func(c *retrieval.Config) { c.EvidenceOff.Shapes = true })},
		{"default, answers without the sentence a unit refers back to", with(func(c *retrieval.Config) { c.EvidenceOff.Anaphora = true })},
		{"default, answers without the lower score of code", with(func(c *retrieval.Config) { c.EvidenceOff.Code = true })},
		{"default, answers without the lower score of longer units", with(func(c *retrieval.Config) { c.EvidenceOff.Length = true })},
		{"default, answers without the passage's rank", with(func(c *retrieval.Config) { c.EvidenceOff.Rank = true })},
	}
	// Each page list left out of the default in turn: what every list adds on top of the others.
	for _, name := range retrieval.DefaultPageLists {
		vs = append(vs, Variant{"default without the " + name + " list", with(func(c *retrieval.Config) {
			c.PageLists = slices.DeleteFunc(slices.Clone(retrieval.DefaultPageLists), func(l string) bool { return l == name })
		})})
	}
	return vs
}

// Row is one ablation result.
type Row struct {
	Variant string  `json:"variant"`
	Metrics Metrics `json:"metrics"`
}

// RunAblations evaluates every variant on the same retriever index.
func RunAblations(ctx context.Context, r *retrieval.Retriever, an retrieval.Analyzer, qs []Question, vs []Variant) ([]Row, error) {
	rows := make([]Row, 0, len(vs))
	for _, v := range vs {
		m, err := Retrieve(ctx, r.WithConfig(v.Config), an, qs)
		if err != nil {
			return nil, fmt.Errorf("ablation %q: %w", v.Name, err)
		}
		m.Misses = nil
		rows = append(rows, Row{Variant: v.Name, Metrics: m})
	}
	return rows, nil
}

// Markdown renders rows as a markdown table.
func Markdown(rows []Row) string {
	var b strings.Builder
	fmt.Fprintf(&b, "| variant | Hit@1 | Hit@3 | Hit@5 | Hit@8 | MRR | fact in context | fact in answer | in its first %d | answer p50 chars | p50 | p99 |\n", LeadChars)
	b.WriteString("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n")
	for _, r := range rows {
		m := r.Metrics
		fmt.Fprintf(&b, "| %s | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %d | %s | %s |\n", r.Variant,
			m.Hit[1], m.Hit[3], m.Hit[5], m.Hit[8], m.MRR, m.FactInContext, m.FactInAnswer, m.FactInLead, m.AnswerChars,
			m.LatencyP50.Round(10_000), m.LatencyP99.Round(10_000))
	}
	return b.String()
}
