package grounding

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/ragproxy/ragproxy/compat"
	"github.com/ragproxy/ragproxy/retrieval"
	"github.com/ragproxy/ragproxy/server"
)

// retrieveResponse is the body of POST /v1/retrieve.
type retrieveResponse struct {
	Object   string           `json:"object"`
	Query    string           `json:"query"`
	Analysis string           `json:"analysis"`
	Rewrites []string         `json:"rewrites"`
	Pages    []retrievedPage  `json:"pages"`
	Chunks   []retrievedChunk `json:"chunks"`
	Context  string           `json:"context"`
	// ContextTokens, Confidence and Empty say how much context there is and how sure retrieval is.
	ContextTokens int     `json:"context_tokens"`
	Confidence    float64 `json:"confidence"`
	Empty         bool    `json:"empty"`
	// Degraded, present only when the query embeddings failed or ran out of time, says why (retrieval's
	// DegradedEmbedTimeout, DegradedEmbedError): the timings' "embed" is then the time given up, and the pages
	// come from the lexical lists alone.
	Degraded string `json:"degraded,omitempty"`
	// Timings are the stages' durations in time.Duration's notation ("1.5ms").
	Timings map[string]string `json:"timings"`
}

// retrievedPage is a page of the /v1/retrieve body.
type retrievedPage struct {
	URL       string  `json:"url"`
	Title     string  `json:"title"`
	Summary   string  `json:"summary"`
	Community int     `json:"community"`
	Score     float64 `json:"score"`
}

// retrievedChunk is a passage of the /v1/retrieve body.
type retrievedChunk struct {
	URL   string  `json:"url"`
	Text  string  `json:"text"`
	Score float64 `json:"score"`
	// Section, present when the page gives it an id, links the section the passage starts in ("page#id"), as
	// the offline answer links its quotes.
	Section string `json:"section,omitempty"`
}

// newRetrieveResponse writes what analysis and retrieval found as the /v1/retrieve body; section names the id of
// the section a passage starts in ("" for none).
func newRetrieveResponse(a retrieval.Analysis, res *retrieval.Result, section func(retrieval.ChunkHit) string) retrieveResponse {
	out := retrieveResponse{Object: "retrieval", Query: a.Question, Analysis: a.Source, Rewrites: res.Rewrites,
		Pages: make([]retrievedPage, 0, len(res.Pages)), Chunks: make([]retrievedChunk, 0, len(res.Chunks)),
		Context: res.Context, ContextTokens: res.ContextTokens, Confidence: res.Confidence, Empty: res.Empty,
		Degraded: res.Degraded}
	for _, p := range res.Pages {
		out.Pages = append(out.Pages, retrievedPage{URL: p.URL, Title: p.Title, Summary: p.Summary, Community: p.Community, Score: p.Score})
	}
	for _, c := range res.Chunks {
		chunk := retrievedChunk{URL: c.URL, Text: c.Text, Score: c.Score}
		if id := section(c); id != "" {
			chunk.Section = c.URL + quoteFragment(id, "")
		}
		out.Chunks = append(out.Chunks, chunk)
	}
	if res.Durations != nil {
		out.Timings = make(map[string]string, len(res.Durations))
		for stage, d := range res.Durations {
			out.Timings[stage] = d.String()
		}
	}
	return out
}

// Routes implements server.Router: POST /v1/retrieve.
func (g *Grounder) Routes() []server.Route {
	return []server.Route{{Method: http.MethodPost, Path: "/retrieve", Handle: g.retrieve}}
}

// retrieve accepts {"query": "..."} or {"messages": [...]} (chat messages, validated like a chat request), and
// optionally "model" (a section assistant's name retrieves from its pages alone), and returns the retrieval
// without generation.
func (g *Grounder) retrieve(ctx context.Context, req *server.Request) (any, error) {
	body := req.Body
	var in struct {
		Query    *string         `json:"query"`
		Messages json.RawMessage `json:"messages"`
		Model    string          `json:"model"`
	}
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, compat.InvalidJSON(err)
	}
	if in.Model != "" && g.Model != "" && in.Model != g.Model && g.assistant(in.Model) == nil {
		return nil, compat.ModelNotFound(in.Model)
	}
	var msgs []retrieval.Message
	switch {
	case in.Query != nil:
		if strings.TrimSpace(*in.Query) == "" {
			return nil, compat.InvalidRequest("query", "", "query must not be empty")
		}
		msgs = []retrieval.Message{{Role: "user", Content: *in.Query}}
	case len(in.Messages) > 0:
		chat, err := compat.DecodeChatRequest([]byte(`{"messages":` + string(in.Messages) + `}`))
		if err != nil {
			return nil, err
		}
		msgs = Messages(chat.Messages)
	default:
		return nil, compat.InvalidRequest("query", "", "either query or messages is required")
	}
	// As SearchAs, holding the retriever until the passages' sections are read from its index.
	r, release := g.Retriever.Acquire()
	defer release()
	r = g.retrieverFor(r, in.Model)
	a, res, _, err := g.search(ctx, r, g.siteName(in.Model), msgs, false)
	if err != nil {
		return nil, err
	}
	if res == nil {
		return nil, compat.InvalidRequest("messages", "", "the messages contain no user question")
	}
	return newRetrieveResponse(a, res, r.SectionAnchor), nil
}
