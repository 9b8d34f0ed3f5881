package retrieval

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ragproxy/ragproxy/llm"
	"github.com/ragproxy/ragproxy/textnorm"
)

// Message is one conversation turn as retrieval sees it: text only.
type Message struct {
	Role    string
	Content string
}

// Analysis is what query analysis decided for a conversation.
type Analysis struct {
	// Question is the latest user message.
	Question string `json:"question"`
	// NeedsRetrieval is false for messages that need no site knowledge (greetings, thanks, chit-chat).
	NeedsRetrieval bool `json:"retrieval_needed"`
	// Rewrites are retrieval-ready versions of the question (three, from the model or the heuristics).
	Rewrites []string `json:"rewrites"`
	// Source is "llm" or "heuristic".
	Source string `json:"source"`
	// Standalone is the question retrieval reads when the latest message continues the one before it or refers
	// to what it named: the messages joined as the heuristics read them ("how much is in-state tuition? and for
	// out-of-state students?"), a model's analysis included, beside its self-contained rewrites; empty otherwise.
	Standalone string `json:"standalone,omitempty"`
}

// Query is the question retrieval reads for a: its Standalone form, else the Question.
func (a Analysis) Query() string {
	if a.Standalone != "" {
		return a.Standalone
	}
	return a.Question
}

// Analyzer turns a conversation into an Analysis.
type Analyzer interface {
	Analyze(ctx context.Context, msgs []Message) (Analysis, error)
}

// AnalysisWindow is how many of the latest messages analysis reads (as in the FHNW prototype).
const AnalysisWindow = 12

// Heuristic rewrites without a model: the question, the question with the previous user turn (a follow-up the
// rules below miss may need it), and the question's key terms. A message that continues the one before ("and for
// out-of-state students?", "what about fall?") or briefly refers to what it named ("what are its opening
// hours?") is read joined to it (and a follow-up of a follow-up to the question that names the subject): that is
// its Standalone form, and the rewrites are that form and its key terms. It always finds retrieval needed.
type Heuristic struct{}

var _ Analyzer = Heuristic{}

// Analyze implements Analyzer.
func (Heuristic) Analyze(_ context.Context, msgs []Message) (Analysis, error) {
	q, prev := lastUserTurns(msgs)
	a := Analysis{Question: q, NeedsRetrieval: true, Source: "heuristic"}
	if q == "" {
		return a, nil
	}
	rw := []string{q}
	if a.Standalone = standaloneOf(msgs, q, prev); a.Standalone != "" {
		// Alone, a follow-up asks the site nothing it can answer ("and for spring 2017?"): its joined form and
		// that form's key terms are what retrieval searches for.
		q = a.Standalone
		rw = []string{q}
	} else if prev != "" {
		rw = append(rw, prev+" "+q)
	}
	if kt := keyTerms(q); kt != "" {
		rw = append(rw, kt)
	}
	a.Rewrites = dedupe(rw)
	return a, nil
}

// followsUp reports whether message q follows up the one before: it continues it or briefly refers to what it
// named.
func followsUp(q string) bool { return continues(q) || refersBriefly(q) }

// standaloneOf is Analysis.Standalone for msgs, whose latest user message is q and the one before it prev ("" for
// none): q joined to the messages it follows up when it follows up prev, else "".
func standaloneOf(msgs []Message, q, prev string) string {
	if prev == "" || !followsUp(q) {
		return ""
	}
	return joinedTurns(msgs)
}

// maxJoinedTurns is the most user messages a follow-up's standalone form joins: the follow-up and the questions
// it follows up, back to one that stands on its own.
const maxJoinedTurns = 3

// joinedTurns is the latest user message of msgs joined to the ones it follows up, oldest first: a follow-up of a
// follow-up ("and international?" after "and out-of-state?" after "how much is in-state tuition?") joins back to
// the question that names the subject, at most maxJoinedTurns messages.
func joinedTurns(msgs []Message) string {
	var turns []string
	for i := len(msgs) - 1; i >= 0 && len(turns) < maxJoinedTurns; i-- {
		m := strings.TrimSpace(msgs[i].Content)
		if msgs[i].Role != "user" || m == "" {
			continue
		}
		turns = append(turns, m)
		if len(turns) > 1 && !followsUp(m) {
			break // the question that names the subject
		}
	}
	slices.Reverse(turns)
	return strings.Join(turns, " ")
}

func lastUserTurns(msgs []Message) (last, prev string) {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role != "user" || strings.TrimSpace(msgs[i].Content) == "" {
			continue
		}
		if last == "" {
			last = strings.TrimSpace(msgs[i].Content)
			continue
		}
		return last, strings.TrimSpace(msgs[i].Content)
	}
	return last, ""
}

// keyTerms keeps the words of q that are not stopwords of its language, in order: the language it is surely
// written in among those analysed here (textnorm.DetectQuestion), else English. With English stopwords alone a
// German question's key terms were the question again ("wie kann ich die …"); with its own, the Handbook's German
// questions gained one fact in the first 300 characters and its Spanish ones one first page (MRR 0.831 → 0.852),
// the LibreOffice Help's German MRR 0.869 → 0.877, nothing lower; English questions keep their terms (the ten
// English sets unchanged). It costs about 17 µs a question.
func keyTerms(q string) string {
	var terms []string
	var l *textnorm.Language // English
	if lang, ok := textnorm.DetectQuestion(q, textnorm.Analysed()); ok {
		l = textnorm.LanguageOf(lang)
	}
	for _, w := range questionWords(q) {
		if w == "" || l.IsStopword(w) {
			continue
		}
		terms = append(terms, w)
	}
	return strings.Join(terms, " ")
}

// questionWords splits q at spaces into lowercase words without their surrounding punctuation (possibly empty).
func questionWords(q string) []string {
	words := strings.Fields(q)
	for i, f := range words {
		words[i] = questionWord(f)
	}
	return words
}

// questionWord is one whitespace-separated field of a question as questionWords reads it: lower case, without
// the punctuation around it.
func questionWord(field string) string {
	return strings.Trim(strings.ToLower(field), `.,;:!?"'()[]{}¿¡`)
}

// DefaultAnalysisTimeout is LLMAnalyzer.Timeout's default.
const DefaultAnalysisTimeout = 5 * time.Second

// LLMAnalyzer asks a chat model for the analysis with strict JSON output and falls back to Heuristic when the
// call fails, returns junk or takes longer than Timeout; it never returns an error, so a sick upstream slows an
// answer by at most Timeout.
type LLMAnalyzer struct {
	// Ask asks the model (which one, and through which upstream, is the Ask's business). Required.
	Ask llm.Ask
	// Timeout bounds the whole analysis, retries and failover included; default DefaultAnalysisTimeout.
	Timeout time.Duration
	// SiteName describes the site in the prompt ("the UC Berkeley Academic Guide"); optional.
	SiteName string
	// OnFallback, if set, is told why the heuristics were used.
	OnFallback func(err error)
}

var _ Analyzer = (*LLMAnalyzer)(nil)

type siteNameKey struct{}

// WithSiteName returns ctx naming the site, or the part of it, whose assistant a conversation is analysed for:
// LLMAnalyzer prefers it to its SiteName, so that a section assistant's questions are rewritten for its section
// ("Lakeshore Polytechnic — nursing") rather than for the whole site.
func WithSiteName(ctx context.Context, name string) context.Context {
	return context.WithValue(ctx, siteNameKey{}, name)
}

type siteLanguagesKey struct{}

// WithSiteLanguages returns ctx naming the languages of the pages a conversation's queries search (ISO 639
// codes, the main one first; Retriever.Languages): LLMAnalyzer asks for its rewrites in their language when
// they are not English alone.
func WithSiteLanguages(ctx context.Context, langs []string) context.Context {
	return context.WithValue(ctx, siteLanguagesKey{}, langs)
}

// SiteLanguagesOf returns the languages WithSiteLanguages put in ctx, or nil.
func SiteLanguagesOf(ctx context.Context) []string {
	langs, _ := ctx.Value(siteLanguagesKey{}).([]string)
	return langs
}

// RewriteLanguageRule is the sentence the analysis prompt ends with for a site in langs (the main language
// first): "" for a site in English alone, whose prompt stays as it was.
func RewriteLanguageRule(langs []string) string {
	if len(langs) == 0 || len(langs) == 1 && textnorm.IsEnglish(langs[0]) {
		return ""
	}
	names := make([]string, len(langs))
	for i, l := range langs {
		names[i] = LanguageName(l)
	}
	return " The website's pages are written in " + strings.Join(names, ", ") + ": write each search query in " +
		"the language of the pages that would answer it (" + names[0] + " when unsure), whatever the language " +
		"of the conversation."
}

// SiteNameOf returns the name WithSiteName put in ctx, or "".
func SiteNameOf(ctx context.Context) string {
	name, _ := ctx.Value(siteNameKey{}).(string)
	return name
}

// rewriteHookKey is the context key of WithRewriteHook's function.
type rewriteHookKey struct{}

// WithRewriteHook returns ctx carrying onRewrite, which LLMAnalyzer then calls with each of its rewrites as soon
// as the model has written it: the analysis is streamed, so that a caller can start on the first rewrites (embed
// them) while the model writes the rest. The Analysis it returns is the same as without the hook.
func WithRewriteHook(ctx context.Context, onRewrite func(rewrite string)) context.Context {
	return context.WithValue(ctx, rewriteHookKey{}, onRewrite)
}

// rewriteScanner reads the rewrites out of an analysis while the model writes it: feed takes the text so far and
// calls emit once for each string of the "rewrites" array that has been closed since, up to the three an
// analysis keeps.
type rewriteScanner struct {
	emit func(string)
	n    int // strings of the array seen so far
}

func (s *rewriteScanner) feed(text string) {
	_, rest, ok := strings.Cut(text, `"rewrites"`)
	if !ok {
		return
	}
	if _, rest, ok = strings.Cut(rest, "["); !ok {
		return
	}
	for k := 0; k < 3; k++ {
		rest = strings.TrimLeft(rest, " \t\r\n,")
		if rest == "" || rest[0] != '"' {
			return
		}
		end := jsonStringEnd(rest)
		if end < 0 {
			return // the string is still being written
		}
		if k == s.n {
			var v string
			if json.Unmarshal([]byte(rest[:end]), &v) != nil {
				return
			}
			s.n++
			if v = strings.TrimSpace(v); v != "" {
				s.emit(v)
			}
		}
		rest = rest[end:]
	}
}

// jsonStringEnd returns the length of the JSON string literal s starts with (s[0] is its opening quote), or -1
// when s holds no closing quote yet.
func jsonStringEnd(s string) int {
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return -1
}

// AnalysisPrompt instructs the analysis model.
const AnalysisPrompt = `You prepare search queries for a website assistant%s. Read the conversation and decide ` +
	`whether answering the latest user message needs information from the website (false only for greetings, ` +
	`thanks, or requests about the conversation itself). Write exactly three different search queries that ` +
	`together find the answer: self-contained (resolve pronouns and follow-ups from earlier turns), with the ` +
	`specific names, programs and terms spelled out, abbreviations expanded, and misspellings corrected.`

// analysisSchema is the JSON Schema of the analysis reply.
var analysisSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"retrieval_needed": map[string]any{"type": "boolean"},
		"rewrites": map[string]any{"type": "array", "items": map[string]any{"type": "string"},
			"minItems": 3, "maxItems": 3},
	},
	"required":             []string{"retrieval_needed", "rewrites"},
	"additionalProperties": false,
}

// Analyze implements Analyzer.
func (a *LLMAnalyzer) Analyze(ctx context.Context, msgs []Message) (Analysis, error) {
	res, err := a.analyze(ctx, msgs)
	if err == nil {
		return res, nil
	}
	if a.OnFallback != nil {
		a.OnFallback(err)
	}
	return Heuristic{}.Analyze(ctx, msgs)
}

func (a *LLMAnalyzer) analyze(ctx context.Context, msgs []Message) (Analysis, error) {
	q, prev := lastUserTurns(msgs)
	if q == "" {
		return Analysis{}, errors.New("analysis: no user message")
	}
	// A follow-up is searched for joined to what it follows up, as the heuristics read it, beside the model's
	// self-contained rewrites: alone it asks the site nothing ("and for spring 2017?" finds course listings of
	// spring 2017), and as the query it would be one of four searches fused.
	standalone := standaloneOf(msgs, q, prev)
	if len(msgs) > AnalysisWindow {
		msgs = msgs[len(msgs)-AnalysisWindow:]
	}
	var convo strings.Builder
	for _, m := range msgs {
		if m.Role == "user" || m.Role == "assistant" {
			fmt.Fprintf(&convo, "%s: %s\n", m.Role, m.Content)
		}
	}
	site := ""
	if name := cmp.Or(SiteNameOf(ctx), a.SiteName); name != "" {
		site = " for " + name
	}
	timeout := a.Timeout
	if timeout <= 0 {
		timeout = DefaultAnalysisTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	p := llm.Prompt{
		System: fmt.Sprintf(AnalysisPrompt, site) + RewriteLanguageRule(SiteLanguagesOf(ctx)),
		User:   convo.String(),
		JSON:   &llm.Schema{Name: "query_analysis", Definition: analysisSchema},
	}
	if hook, _ := ctx.Value(rewriteHookKey{}).(func(string)); hook != nil {
		p.OnText = (&rewriteScanner{emit: hook}).feed
	}
	reply, err := a.Ask(ctx, p)
	if err != nil {
		return Analysis{}, fmt.Errorf("analysis: %w", err)
	}
	var out struct {
		RetrievalNeeded *bool    `json:"retrieval_needed"`
		Rewrites        []string `json:"rewrites"`
	}
	if err := json.Unmarshal([]byte(reply.Text), &out); err != nil {
		return Analysis{}, fmt.Errorf("analysis: %w", err)
	}
	rw := dedupe(out.Rewrites)
	if out.RetrievalNeeded == nil || len(rw) == 0 {
		return Analysis{}, errors.New("analysis: incomplete JSON")
	}
	if len(rw) > 3 {
		rw = rw[:3]
	}
	return Analysis{Question: q, Standalone: standalone, NeedsRetrieval: *out.RetrievalNeeded, Rewrites: rw, Source: "llm"}, nil
}
