package grounding

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"

	"github.com/ragproxy/ragproxy/compat"
	"github.com/ragproxy/ragproxy/observability"
	"github.com/ragproxy/ragproxy/retrieval"
	"github.com/ragproxy/ragproxy/retrieval/faq"
	"github.com/ragproxy/ragproxy/server"
	"github.com/ragproxy/ragproxy/siteurl"
	"github.com/ragproxy/ragproxy/tokenizer"
)

// Grounder grounds chat requests in a site index: it analyses the conversation, retrieves pages and passages,
// and either asks the model with the context (online) or answers from the passages itself (offline). It is safe
// for concurrent use.
type Grounder struct {
	// Retriever searches the index: a *retrieval.Retriever, or a *retrieval.Live that switches index versions
	// while serving (each request searches one version from start to end). Required.
	Retriever retrieval.Source
	// Analyzer writes the rewrites; default retrieval.Heuristic. A model's analyser is asked only when the
	// heuristics cannot stand in for it, and waited for at most AnalysisBudget (see analyseAndRetrieve).
	Analyzer retrieval.Analyzer
	// Tracing, when set, records the analysis and each retrieval stage as spans of the request's trace.
	// Default nil: no spans.
	Tracing *observability.Tracing
	// AnalysisBudget is the longest a request waits for Analyzer's analysis before it goes on with the
	// retrieval on the heuristic analysis; default DefaultAnalysisBudget.
	AnalysisBudget time.Duration
	// Tokenizer counts usage of answers written without a model. Required.
	Tokenizer *tokenizer.Tokenizer
	// SiteName names the site in the grounding prompt; default "this website".
	SiteName string
	// Offline answers every request from the passages, without a model.
	Offline bool
	// SourceEvents sends Open WebUI source events on every stream; by default only requests carrying
	// X-OpenWebUI-* headers get them.
	SourceEvents bool
	// MaxSources bounds the fallback sources list and the "I don't know" links; default DefaultMaxSources.
	MaxSources int
	// MaxQuestionTokens and MaxHistoryTokens bound what analysis and retrieval read of the latest user message
	// and of each earlier message (o200k tokens; the upstream model still gets every message whole), so an
	// enormous question costs no more retrieval work than a long one. Defaults DefaultMaxQuestionTokens and
	// DefaultMaxHistoryTokens.
	MaxQuestionTokens, MaxHistoryTokens int
	// LinkHosts are hosts besides the site's own (those of the index's pages) that answers may link to, when the
	// link was in the context (see LinkPolicy). Default none.
	LinkHosts []string
	// FAQ, when set, is looked up with the analysed question before retrieval: a match scoring at least
	// FAQDirectThreshold (default faq.DefaultDirectThreshold) is answered with the entry's own answer and its
	// link, without a model and without retrieval; one scoring at least FAQEvidenceThreshold (default
	// faq.DefaultEvidenceThreshold) goes first in the context as the site's answer.
	FAQ                                      *faq.Matcher
	FAQDirectThreshold, FAQEvidenceThreshold float64
	// LiveFAQ, when set, replaces FAQ with entries that may change while serving (the file's and those the
	// admin API adds). Default nil.
	LiveFAQ *LiveFAQ
	// SiteFAQ says what the FAQ entries of the index's pages (found in their markup at ingest) may do; default
	// SiteFAQEvidence.
	SiteFAQ SiteFAQUse
	// OnFAQ, if set, is told of every FAQ match used, with its kind (FAQDirect or FAQEvidence).
	OnFAQ func(ctx context.Context, kind string)
	// OnRetrieval, if set, sees every retrieval's stage times and confidence (server.MetricsObserver's
	// ObserveRetrieval records them).
	OnRetrieval func(ctx context.Context, r server.Retrieval)
	// Model is the model id of the assistant over the whole site. When set, /v1/retrieve answers
	// model_not_found for a model that is neither it nor an assistant's. Default "": any other model retrieves
	// from the whole site.
	Model string
	// Assistants are the section assistants: requests for one of their names search only its pages, are
	// answered in its name, and use only FAQ entries on its pages. Names must be unique. Default none.
	Assistants []Assistant

	hosts    atomic.Pointer[linkHostSet] // of the version last searched
	siteFAQs atomic.Pointer[siteFAQSet]  // of the version last searched
	scoped   atomic.Pointer[scopedSet]   // the assistants' retrievers of the two versions last searched
}

// linkHostSet are the hosts answers may link to when grounded in one index version.
type linkHostSet struct {
	r     *retrieval.Retriever
	hosts []string
}

var (
	_ server.Grounder  = (*Grounder)(nil)
	_ server.Router    = (*Grounder)(nil)
	_ server.Varier    = (*Grounder)(nil)
	_ server.Versioner = (*Grounder)(nil)
)

// IndexVersion implements server.Versioner: the version searches start on now.
func (g *Grounder) IndexVersion() string {
	r, release := g.Retriever.Acquire()
	defer release()
	return r.Index().Manifest.Version
}

// Ground implements server.Grounder. A structured request (response_format json_*, tools) gets the context too,
// with its answer's text left as it is (see structured.go).
func (g *Grounder) Ground(ctx context.Context, req *server.GroundRequest) (*server.Grounding, error) {
	gr, err := g.ground(ctx, req)
	if f := structured(req.Request); f != nil && gr != nil && err == nil && req.Task == "" {
		gr = g.structure(req, f, gr)
	}
	return gr, err
}

func (g *Grounder) ground(ctx context.Context, req *server.GroundRequest) (*server.Grounding, error) {
	if req.Task != "" {
		if g.Offline {
			return &server.Grounding{Answer: g.answer(req, offlineTask(req))}, nil // offlineTask cleans what it quotes
		}
		return nil, nil // tasks go to the model untouched
	}
	base, release := g.Retriever.Acquire()
	defer release()
	r, site := g.retrieverFor(base, req.Model), g.siteName(req.Model)
	a, res, fm, err := g.search(ctx, r, site, Messages(req.Messages), true)
	if err != nil {
		return nil, err
	}
	if fm.direct {
		gr := g.faqAnswer(ctx, req, fm, g.linkHosts(base))
		gr.Question = &server.QuestionReport{Question: a.Question, Outcome: server.OutcomeFAQ, Topic: Topic(fm.Entry.URL)}
		return gr, nil
	}
	if fm.Entry != nil {
		g.reportFAQ(ctx, FAQEvidence)
	}
	// An assistant's own answers say whose they are: its name leads them.
	named := func(text string) string {
		if g.assistant(req.Model) == nil {
			return text
		}
		return "**" + mdText(site) + "**\n\n" + text
	}
	if res == nil {
		if g.Offline {
			return &server.Grounding{Answer: g.answer(req, named("Ask me a question about this site's pages."))}, nil
		}
		return nil, nil // no question, or one that needs no site knowledge: the model answers it as is
	}
	limit := g.MaxSources
	if limit <= 0 {
		limit = DefaultMaxSources
	}
	events := g.sendsEvents(req.Header)
	// An answer written here cites the pages it links to, which it lists: those it quotes, or the closest ones it
	// offers. It quotes the pages, so it goes through the link policy and the escaping of a model's answer.
	policy := NewLinkPolicy(res, g.linkHosts(base))
	cite := func(text, outcome string) *server.Grounding {
		text = CleanAnswer(text, policy)
		top := Cited(text, res, limit)
		gr := &server.Grounding{Answer: g.answer(req, text), NoStore: res.Degraded != "", Question: report(a, res, outcome)}
		gr.Answer.Annotations = annotate(text, top)
		if events {
			gr.Events = SourceEvents(res, top)
		}
		return gr
	}
	switch {
	case res.Empty:
		return cite(named(DontKnow(res, limit)), server.OutcomeUnanswered), nil
	case g.Offline:
		return cite(named(OfflineAnswer(r, res, limit)), server.OutcomeAnswered), nil
	}
	out := make([]compat.Message, 0, len(req.Messages)+1)
	prompt := SystemPrompt(site, res)
	if page, ok := PageFrom(req.Header); ok {
		prompt += "\n\n" + page.Sentence()
	}
	out = append(out, compat.TextMessage("system", prompt))
	out = append(out, req.Messages...)
	return &server.Grounding{
		Messages: out,
		NoStore:  res.Degraded != "",
		Question: report(a, res, server.OutcomeAnswered),
		NewFilter: func() server.ContentFilter {
			return &sourcesFilter{links: NewAnswerFilter(policy), res: res, max: limit, events: events}
		},
	}, nil
}

// DefaultMaxSources is Grounder.MaxSources's default.
const DefaultMaxSources = 3

// Defaults of Grounder's bounds on what retrieval reads.
const (
	DefaultMaxQuestionTokens = 1000
	DefaultMaxHistoryTokens  = 500
)

// bounded is the part of a conversation analysis and retrieval read: the last retrieval.AnalysisWindow messages,
// the latest user message cut to MaxQuestionTokens and each earlier one to MaxHistoryTokens.
func (g *Grounder) bounded(msgs []retrieval.Message) []retrieval.Message {
	msgs = msgs[max(0, len(msgs)-retrieval.AnalysisWindow):]
	question, history := g.MaxQuestionTokens, g.MaxHistoryTokens
	if question <= 0 {
		question = DefaultMaxQuestionTokens
	}
	if history <= 0 {
		history = DefaultMaxHistoryTokens
	}
	last := -1
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == "user" && strings.TrimSpace(msgs[i].Content) != "" {
			last = i
			break
		}
	}
	out := make([]retrieval.Message, len(msgs))
	for i, m := range msgs {
		limit := history
		if i == last {
			limit = question
		}
		// A token takes at least one byte: a message of at most limit bytes fits without counting.
		if len(m.Content) > limit {
			m.Content = g.Tokenizer.Truncate(m.Content, limit)
		}
		out[i] = m
	}
	return out
}

// linkHosts are the hosts answers grounded in r may link to: those of r's pages, and LinkHosts. They are kept
// for the version last asked about.
func (g *Grounder) linkHosts(r *retrieval.Retriever) []string {
	if set := g.hosts.Load(); set != nil && set.r == r {
		return set.hosts
	}
	set := &linkHostSet{r: r}
	seen := map[string]bool{}
	add := func(h string) {
		if h = strings.ToLower(strings.TrimPrefix(h, "www.")); h != "" && !seen[h] {
			seen[h] = true
			set.hosts = append(set.hosts, h)
		}
	}
	for _, p := range r.Index().Pages {
		if n, ok := siteurl.ParseLink(p.URL); ok {
			add(n.Host)
		}
	}
	for _, h := range g.LinkHosts {
		add(h)
	}
	g.hosts.Store(set)
	return set.hosts
}

// Search analyses the conversation and retrieves for it, in the index version being served; an FAQ entry the
// question matches leads the context. The result is nil when there is no question, or when analysis finds that
// no retrieval is needed.
func (g *Grounder) Search(ctx context.Context, msgs []retrieval.Message) (retrieval.Analysis, *retrieval.Result, error) {
	return g.SearchAs(ctx, "", msgs)
}

// SearchAs is Search for a request to model: an assistant's name searches only its pages, any other model the
// whole site.
func (g *Grounder) SearchAs(ctx context.Context, model string, msgs []retrieval.Message) (retrieval.Analysis, *retrieval.Result, error) {
	r, release := g.Retriever.Acquire()
	defer release()
	a, res, _, err := g.search(ctx, g.retrieverFor(r, model), g.siteName(model), msgs, false)
	return a, res, err
}

// search analyses msgs, for the assistant of site, and retrieves in r. A question the FAQ matches is answered
// from it when direct is set (the returned match is direct, the result nil: no retrieval ran); otherwise a match
// joins the result's context.
func (g *Grounder) search(ctx context.Context, r *retrieval.Retriever, site string, msgs []retrieval.Message, direct bool) (retrieval.Analysis, *retrieval.Result, faqMatch, error) {
	start := time.Now()
	msgs = g.bounded(msgs)
	// The heuristic analysis costs microseconds and names the question every analysis keeps (the latest user
	// message), so the FAQ is matched before any model is asked: a direct answer makes no upstream call.
	h, err := retrieval.Heuristic{}.Analyze(ctx, msgs)
	if err != nil {
		return h, nil, faqMatch{}, fmt.Errorf("analysis: %w", err)
	}
	if h.Question == "" {
		return h, nil, faqMatch{}, nil
	}
	fm, found := g.matchFAQ(r, h.Question)
	if found && r.Scope() != nil && !r.Scope().Match(fm.Entry.URL) {
		found, fm = false, faqMatch{} // an assistant answers from its own pages only
	}
	if found && fm.direct && direct {
		return h, nil, fm, nil
	}
	heuristic := time.Since(start)
	out, err := g.analyseAndRetrieve(ctx, r, site, msgs, h)
	if err != nil {
		return out.a, nil, faqMatch{}, err
	}
	res := out.res
	if res == nil {
		return out.a, nil, faqMatch{}, nil
	}
	res.Durations[retrieval.StageAnalysis] = heuristic + out.waited
	g.Tracing.Record(ctx, "analysis", start, start.Add(heuristic+out.waited), attribute.String("ragproxy.analysis", out.how))
	if g.OnRetrieval != nil {
		rep := server.Retrieval{Confidence: res.Confidence, Empty: res.Empty, Degraded: res.Degraded}
		for _, stage := range retrieval.Stages() {
			if d, ok := res.Durations[stage]; ok {
				rep.Stages = append(rep.Stages, observability.StageTiming{Stage: stage, Duration: d})
			}
		}
		g.OnRetrieval(ctx, rep)
	}
	if found {
		res = withFAQ(res, fm.Entry)
		fm.direct = false
	}
	return out.a, res, fm, nil
}

// exactUsageBytes is the longest message whose tokens an answer written here counts exactly; longer ones are
// estimated at four bytes a token, so that an enormous message costs no tokenizer work for its usage.
const exactUsageBytes = 256 << 10

// answer wraps a text written without a model, with usage counted by the tokenizer (see exactUsageBytes).
func (g *Grounder) answer(req *server.GroundRequest, text string) *server.Answer {
	prompt := 0
	for _, m := range req.Messages {
		t := m.Text()
		if len(t) > exactUsageBytes {
			prompt += len(t) / 4
		} else {
			prompt += g.Tokenizer.Count(t)
		}
		prompt += 4 // per-message overhead, as OpenAI counts chat tokens
	}
	completion := g.Tokenizer.Count(text)
	return &server.Answer{Text: text, Usage: compat.Usage{PromptTokens: prompt, CompletionTokens: completion,
		TotalTokens: prompt + completion}}
}

// Vary implements server.Varier: whether Open WebUI source events go out, and the page the visitor is reading
// (which the model is told), depend on the request's headers. The FAQ entries added while serving are part of
// it too, so that adding one changes the answers the response cache replays.
func (g *Grounder) Vary(h http.Header) string {
	v := ""
	if g.sendsEvents(h) {
		v = "openwebui"
	}
	if page, ok := PageFrom(h); ok {
		v += "\x00page\x00" + page.URL + "\x00" + page.Title
	}
	if g.LiveFAQ != nil {
		if added := g.LiveFAQ.Added(); added != "" {
			v += "\x00faq\x00" + added
		}
	}
	return v
}

// sendsEvents reports whether a request with these headers gets Open WebUI source events.
func (g *Grounder) sendsEvents(h http.Header) bool { return g.SourceEvents || hasOpenWebUIHeaders(h) }

// Messages are a chat request's messages as retrieval reads them: role and text.
func Messages(msgs []compat.Message) []retrieval.Message {
	out := make([]retrieval.Message, 0, len(msgs))
	for _, m := range msgs {
		out = append(out, retrieval.Message{Role: m.Role, Content: m.Text()})
	}
	return out
}

func hasOpenWebUIHeaders(h http.Header) bool {
	for k := range h {
		if strings.HasPrefix(strings.ToLower(k), "x-openwebui-") {
			return true
		}
	}
	return false
}
