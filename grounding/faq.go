package grounding

import (
	"context"
	"fmt"
	"strings"

	"github.com/ragproxy/ragproxy/retrieval"
	"github.com/ragproxy/ragproxy/retrieval/faq"
	"github.com/ragproxy/ragproxy/server"
)

// FAQ kinds reported to OnFAQ.
const (
	FAQDirect   = "direct"
	FAQEvidence = "evidence"
)

// faqMatch is the FAQ entry a question asks, and how it is used: directly (answered without a model) or as
// evidence (added to the context first).
type faqMatch struct {
	faq.Match
	direct bool
}

// matchFAQ looks the analysed question up in the FAQ: a match at FAQDirectThreshold answers directly, one at
// FAQEvidenceThreshold joins the context.
func (g *Grounder) matchFAQ(question string) (faqMatch, bool) {
	if g.FAQ == nil || question == "" {
		return faqMatch{}, false
	}
	m, ok := g.FAQ.Match(question)
	if !ok {
		return faqMatch{}, false
	}
	direct, evidence := g.FAQDirectThreshold, g.FAQEvidenceThreshold
	if direct <= 0 {
		direct = faq.DefaultDirectThreshold
	}
	if evidence <= 0 {
		evidence = faq.DefaultEvidenceThreshold
	}
	switch {
	case m.Score >= direct:
		return faqMatch{m, true}, true
	case m.Score >= evidence:
		return faqMatch{m, false}, true
	}
	return faqMatch{}, false
}

// faqSource is the page an FAQ entry's answer comes from.
func faqSource(e *faq.Entry) Source {
	title := e.Title
	if title == "" {
		title = e.Question
	}
	return Source{URL: e.URL, Title: title}
}

// faqAnswer answers req with the entry's own answer and its source link, streamed like any answer.
func (g *Grounder) faqAnswer(ctx context.Context, req *server.GroundRequest, m faqMatch) *server.Grounding {
	src := faqSource(m.Entry)
	text := strings.TrimSpace(m.Entry.Answer) + SourcesMarkdown([]Source{src})
	gr := &server.Grounding{Answer: g.answer(req, text)}
	gr.Answer.Annotations = annotate(text, []Source{src})
	if g.sendsEvents(req.Header) {
		res := &retrieval.Result{Pages: []retrieval.PageHit{{URL: src.URL, Title: src.Title}},
			Chunks: []retrieval.ChunkHit{{URL: src.URL, Text: m.Entry.Answer}}}
		gr.Events = SourceEvents(res, []Source{src})
	}
	g.reportFAQ(ctx, FAQDirect)
	return gr
}

// withFAQ returns res with the entry first in its context, marked as the site's answer to a frequently asked
// question, and its page first among the pages (so the link policy and the Sources list know it).
func withFAQ(res *retrieval.Result, e *faq.Entry) *retrieval.Result {
	out := *res
	src := faqSource(e)
	out.Context = fmt.Sprintf("## Frequently asked question: %s\nURL: %s\nThe site's answer: %s\n\n---\n\n%s",
		strings.TrimSpace(e.Question), e.URL, strings.TrimSpace(e.Answer), res.Context)
	first := retrieval.PageHit{ID: -1, URL: src.URL, Title: src.Title}
	rest := make([]retrieval.PageHit, 0, len(res.Pages))
	for _, p := range res.Pages {
		if p.URL == e.URL { // retrieved too: listed once, first
			first = p
			continue
		}
		rest = append(rest, p)
	}
	out.Pages = append([]retrieval.PageHit{first}, rest...)
	out.Chunks = append([]retrieval.ChunkHit{{ID: -1, PageID: -1, URL: e.URL, Text: e.Answer}}, res.Chunks...)
	out.Empty = false
	return &out
}

func (g *Grounder) reportFAQ(ctx context.Context, kind string) {
	if g.OnFAQ != nil {
		g.OnFAQ(ctx, kind)
	}
}
