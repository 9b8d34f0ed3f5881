package server

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"

	"github.com/ragproxy/ragproxy/compat"
)

// Grounder prepares each chat request before it goes upstream: retrieval
// plugs in here. It is called once per POST /v1/chat/completions, after the
// body was validated and before any upstream call. A nil Grounding (or no
// Grounder at all) leaves the request a pure pass-through.
//
// An error fails the request; an *compat.APIError keeps its status and body,
// anything else becomes a 500 server_error.
type Grounder interface {
	Ground(ctx context.Context, req *GroundRequest) (*Grounding, error)
}

// GroundRequest is what a Grounder sees of a chat request. It must not be
// modified.
type GroundRequest struct {
	// Model is the model the client asked for (an alias or an upstream model).
	Model string
	// Stream reports a streaming request.
	Stream bool
	// Messages are the client's validated messages.
	Messages []compat.Message
	// Request is the whole decoded body, every field as sent.
	Request *compat.ChatRequest
	// Header holds the request headers, e.g. Open WebUI's X-OpenWebUI-Chat-Id
	// and X-OpenWebUI-User-Id, or X-Ragproxy-Retrieval.
	Header http.Header
	// Task is the request's kind as the gateway classified it (TaskKind): ""
	// for a user's question, else a client's background task or a request
	// that bypasses retrieval.
	Task string
	// TaskHeading reports that a message opens with Open WebUI's "### Task:"
	// heading (its task prompts, which all ask for a JSON object), and
	// TaskPrompts[i] that Messages[i] is a client's task prompt: the
	// gateway's reading of the prompts, so a Grounder need not read them again.
	TaskHeading bool
	TaskPrompts []bool
}

// Varier is a Grounder whose decision depends on request headers besides
// the task. Vary returns what it reads of them; the response cache keys
// answers by it, so an answer is only replayed to requests the Grounder
// would have treated alike.
type Varier interface {
	Vary(h http.Header) string
}

// Route is an extra route: under /v1 for a Grounder (a Router), under /admin for Config.Admin. The gateway
// authenticates the request, hands Handle the body, path parameters and query, and writes the result as JSON
// (with Status, 200 by default) or the error as OpenAI's error body.
type Route struct {
	// Method is the HTTP method; Path is a fiber route pattern relative to the group: "/pages" or
	// "/jobs/:id" (a named parameter, one path segment) or "/pages/*" (the rest of the path).
	Method, Path string
	Handle       func(ctx context.Context, req *Request) (any, error)
	// Status is the success status, e.g. 202 for a job that was started; 0 means 200.
	Status int
}

// Raw is a Route's result that is not JSON (an image): written as it is, with its content type.
type Raw struct {
	ContentType string
	Body        []byte
}

// Request is what a Route's handler receives.
type Request struct {
	// Body is the raw request body.
	Body []byte
	// Params are the path parameters by name ("id" for ":id", "*" for the wildcard), percent-decoded.
	Params map[string]string
	// Query is the parsed query string.
	Query url.Values
	// Key is the masked key that authenticated an admin request, for the handler's records; empty under /v1.
	Key string

	logAttrs []any
}

// Log adds key-value pairs (as in slog) to the line that records an admin action, so the log says what was done
// (the page's URL, the job's id) as well as who did it. Under /v1 it does nothing.
func (r *Request) Log(args ...any) { r.logAttrs = append(r.logAttrs, args...) }

// Router is a Grounder that serves extra routes under /v1.
type Router interface {
	Routes() []Route
}

// Grounding is a Grounder's decision for one request. Every field is
// optional.
type Grounding struct {
	// Messages, when non-empty, replace the messages sent upstream (for
	// example with retrieved context added).
	Messages []compat.Message
	// Answer, when set, answers the request without any upstream call; the
	// answer is streamed or returned in OpenAI's format like a model's.
	Answer *Answer
	// NewFilter, when set, returns a fresh filter for each answer of the
	// response (one, or n when the request asks for n > 1 choices): it
	// rewrites that answer's content deltas and appends a trailer (a
	// "Sources" list) as its last content delta before its finish chunk.
	// A filter that is a Citer also annotates its answer.
	NewFilter func() ContentFilter
	// Events are extra raw JSON objects sent as "data:" frames after the
	// last chunk and before [DONE] (Open WebUI's source events); the
	// answers' Citer filters may replace them with their own.
	Events []json.RawMessage
	// NoStore keeps the answer out of the response cache, for an answer grounded in a lesser retrieval than the
	// next request may get (the query's embeddings failed: see retrieval's degraded mode); a cached answer
	// would outlive the failure by the cache's TTL.
	NoStore bool
	// Question, when set, reports the visitor's question and how it was answered, for Config.Questions; a
	// request without one is not logged.
	Question *QuestionReport
}

// Answer is a complete answer written by the Grounder itself (an "I don't
// know" with the closest links, an FAQ match, a cached response).
type Answer struct {
	Text string
	// Annotations cite the pages Text links to (OpenAI's url_citation).
	Annotations []compat.Annotation
	Usage       compat.Usage
}

// usage is the usage of n copies of the answer (a request for n answers).
func (a *Answer) usage(n int) compat.Usage {
	u := a.Usage
	if n > 1 {
		u.CompletionTokens *= n
		u.TotalTokens = u.PromptTokens + u.CompletionTokens
	}
	return u
}

// ContentFilter rewrites one answer's content. Filter is called with each
// content delta in order and returns the text to send instead (possibly "",
// holding text back); Trailer is called once at the end and its text is sent
// as the last content delta. A ContentFilter is used by one goroutine.
type ContentFilter interface {
	Filter(delta string) string
	Trailer() string
}

// Citer is a ContentFilter that knows, once its Trailer has run, what its
// answer cited.
type Citer interface {
	// Annotations cite pages in the answer's whole content as the client
	// gets it (every filtered delta and the trailer). They go out with the
	// trailer delta in a stream, and on the message of a completion.
	Annotations() []compat.Annotation
	// Events, when not nil, replace Grounding.Events for this answer.
	Events() []json.RawMessage
}

// citations returns f's annotations and events, or none when f is not a Citer.
func citations(f ContentFilter) ([]compat.Annotation, []json.RawMessage) {
	if c, ok := f.(Citer); ok {
		return c.Annotations(), c.Events()
	}
	return nil, nil
}
