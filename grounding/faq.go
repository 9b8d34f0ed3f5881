package grounding

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/ragproxy/ragproxy/index"
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

// SiteFAQUse says what the FAQ entries the site's pages mark up (found at ingest) may do.
type SiteFAQUse int

const (
	// SiteFAQEvidence lets a matching entry lead the context, where the model weighs it; it never answers
	// directly. The default: the direct-answer threshold is calibrated on an operator's FAQ, not on what a site's
	// markup happens to hold.
	SiteFAQEvidence SiteFAQUse = iota
	// SiteFAQDirect treats the site's entries like the operator's: a close match is answered directly.
	SiteFAQDirect
	// SiteFAQOff ignores them.
	SiteFAQOff
)

// ParseSiteFAQUse reads a SiteFAQUse by name: "evidence", "direct" or "off".
func ParseSiteFAQUse(s string) (SiteFAQUse, error) {
	switch s {
	case "evidence":
		return SiteFAQEvidence, nil
	case "direct":
		return SiteFAQDirect, nil
	case "off":
		return SiteFAQOff, nil
	}
	return 0, fmt.Errorf("%q: want evidence, direct or off", s)
}

// matchFAQ looks the analysed question up in the operator's FAQ and in the FAQ markup of r's pages: a match at
// FAQDirectThreshold answers directly (a site entry only with SiteFAQDirect), one at FAQEvidenceThreshold joins
// the context. The operator's entry wins a tie.
func (g *Grounder) matchFAQ(r *retrieval.Retriever, question string) (faqMatch, bool) {
	if question == "" {
		return faqMatch{}, false
	}
	best, found := g.classify(g.operatorFAQ(r), question, true)
	if found && best.direct || g.SiteFAQ == SiteFAQOff {
		return best, found
	}
	if site, ok := g.classify(g.siteFAQ(r), question, g.SiteFAQ == SiteFAQDirect); ok && (!found || site.direct || site.Score > best.Score) {
		return site, true
	}
	return best, found
}

// classify matches question in m and says how the match may be used (directly only when direct is allowed).
func (g *Grounder) classify(m *faq.Matcher, question string, allowDirect bool) (faqMatch, bool) {
	if m == nil {
		return faqMatch{}, false
	}
	best, ok := m.Match(question)
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
	case best.Score >= direct && allowDirect:
		return faqMatch{best, true}, true
	case best.Score >= evidence:
		return faqMatch{best, false}, true
	}
	return faqMatch{}, false
}

// siteFAQSet is the matcher of one index version's FAQ markup.
type siteFAQSet struct {
	ix *index.Index
	m  *faq.Matcher // nil when the pages mark up no FAQ
}

// siteFAQ is the matcher of the FAQ entries r's pages mark up, built once per index version: it is kept by
// index, which a section assistant's retriever shares with the whole site's.
func (g *Grounder) siteFAQ(r *retrieval.Retriever) *faq.Matcher {
	if set := g.siteFAQs.Load(); set != nil && set.ix == r.Index() {
		return set.m
	}
	var entries []faq.Entry
	ix := r.Index()
	for i, p := range ix.Pages {
		for _, e := range p.FAQ {
			entries = append(entries, faq.Entry{Question: e.Question, Answer: e.Answer, URL: e.URL, Title: p.Title,
				Alternatives: e.Alternatives, Source: e.Source, Lang: ix.PageLang(i)})
		}
	}
	set := &siteFAQSet{ix: ix}
	if len(entries) > 0 {
		set.m = faq.NewMatcher(entries)
	}
	g.siteFAQs.Store(set)
	return set.m
}

// faqSource is the page an FAQ entry's answer comes from.
func faqSource(e *faq.Entry) Source {
	title := e.Title
	if title == "" {
		title = e.Question
	}
	return Source{URL: e.URL, Title: title}
}

// faqAnswer answers req with the entry's own answer and its source link, streamed like any answer. The answer is
// the FAQ file's or a page's markup, so it goes through the link policy (its page and the links of its own text
// on hosts, the site's and the operator's) and the escaping of a model's answer.
func (g *Grounder) faqAnswer(ctx context.Context, req *server.GroundRequest, m faqMatch, hosts []string) *server.Grounding {
	src := faqSource(m.Entry)
	policy := NewLinkPolicy(&retrieval.Result{Pages: []retrieval.PageHit{{URL: src.URL, Title: src.Title}}, Context: m.Entry.Answer}, hosts)
	text := CleanAnswer(strings.TrimSpace(m.Entry.Answer)+SourcesMarkdown([]Source{src}), policy)
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

// operatorFAQ is the matcher of the operator's entries: LiveFAQ's, for the main language of r's site, when set;
// else FAQ.
func (g *Grounder) operatorFAQ(r *retrieval.Retriever) *faq.Matcher {
	if g.LiveFAQ != nil {
		lang := ""
		if r != nil {
			lang = r.Languages()[0]
		}
		return g.LiveFAQ.MatcherIn(lang)
	}
	return g.FAQ
}

// LiveFAQ is the operator's FAQ while serving: the entries of the FAQ file and those added through the admin
// API, which answer from the next question on. It is safe for concurrent use.
type LiveFAQ struct {
	file []faq.Entry
	mu   sync.Mutex // one build at a time
	st   atomic.Pointer[liveFAQState]
}

// liveFAQState is what LiveFAQ answers with, swapped whole.
type liveFAQState struct {
	added []faq.Entry
	// digest is a digest of the added entries, "" when there are none.
	digest string
	// lang is the language of entries that do not say theirs and whose text does not tell (faq.WithLanguage): the
	// site's main language.
	lang string
	m    *faq.Matcher // nil when there are no entries
}

// NewLiveFAQ returns the FAQ of the file's entries (none for no file), for a site whose main language is lang: an
// entry, of the file or added, that does not say its language and whose text does not tell is read in lang.
func NewLiveFAQ(file []faq.Entry, lang string) *LiveFAQ {
	l := &LiveFAQ{file: file}
	l.st.Store(l.build(nil, lang))
	return l
}

// build is the state of the file's entries and added, read for a site of main language lang.
func (l *LiveFAQ) build(added []faq.Entry, lang string) *liveFAQState {
	st := &liveFAQState{added: added, lang: lang}
	if len(added) > 0 {
		h := sha256.New()
		for _, e := range added {
			fmt.Fprintf(h, "%q %q %q %q %q %q\n", e.Question, e.Answer, e.URL, e.Title, e.Alternatives, e.Lang)
		}
		st.digest = hex.EncodeToString(h.Sum(nil)[:8])
	}
	if entries := append(append([]faq.Entry(nil), l.file...), added...); len(entries) > 0 {
		st.m = faq.NewMatcher(faq.WithLanguage(entries, lang))
	}
	return st
}

// Set replaces the added entries: the matcher of the file's and these entries is built, then swapped in, so a
// question in flight uses the old one or the new one whole.
func (l *LiveFAQ) Set(added []faq.Entry) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.st.Store(l.build(added, l.state().lang))
}

// state is the current state; a LiveFAQ not made by NewLiveFAQ has no entries.
func (l *LiveFAQ) state() *liveFAQState {
	if st := l.st.Load(); st != nil {
		return st
	}
	return &liveFAQState{}
}

// Added is a digest of the added entries, "" when there are none: answers are cached by it (see Grounder.Vary),
// so an answer given before an entry was added is not replayed after.
func (l *LiveFAQ) Added() string { return l.state().digest }

// Matcher is the current matcher, nil when there are no entries.
func (l *LiveFAQ) Matcher() *faq.Matcher { return l.state().m }

// MatcherIn is the current matcher for a site whose main language is lang ("": the one it was built for), built
// again when that language changed: an index reloaded to a version of another main language reads the entries
// that do not tell theirs in the new one.
func (l *LiveFAQ) MatcherIn(lang string) *faq.Matcher {
	if st := l.state(); lang == "" || st.lang == lang {
		return st.m
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	st := l.state()
	if st.lang != lang {
		st = l.build(st.added, lang)
		l.st.Store(st)
	}
	return st.m
}
