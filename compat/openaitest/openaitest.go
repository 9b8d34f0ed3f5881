// Package openaitest is a stand-in for OpenAI's API in tests and
// benchmarks: an httptest server that speaks OpenAI's wire format for
// /v1/chat/completions (streaming and not, n answers, with the usage chunk
// and error bodies), /v1/embeddings (deterministic vectors, float or base64)
// and /v1/models. Latency and per-request failures (status codes, dropped
// connections, hangs, drops mid-stream) can be injected, and every request it
// received is recorded, including whether the caller cancelled it.
//
// It enforces the rules OpenAI's API reference states, with OpenAI's error
// bodies: an embeddings request holds at most 2048 inputs, none empty, each
// at most 8192 tokens and 300,000 in all, counted with cl100k_base as OpenAI
// counts them for its embeddings models, and dimensions only for
// text-embedding-3; a reasoning model (o1, o3, o4-mini and the other
// o-series, gpt-5) takes no temperature but the default and no max_tokens.
// Limits, per key, are options: a token quota that runs out for good
// (insufficient_quota) and requests- and tokens-per-minute limits answered
// with OpenAI's x-ratelimit-* headers, on a clock tests can drive. Stats
// counts the tokens billed per endpoint and model and the refusals per code.
//
// A Server is safe for concurrent use.
package openaitest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"

	"github.com/ragproxy/ragproxy/tokenizer"
)

// Config configures a fake upstream. The zero value works.
type Config struct {
	// APIKey, when set, is the bearer token every request must carry;
	// others get OpenAI's 401 invalid_api_key.
	APIKey string
	// Models are the model ids served; a chat or embeddings request for any
	// other model gets 404 model_not_found. Default: gpt-4o-mini, gpt-4o,
	// text-embedding-3-small.
	Models []string
	// Reply decides the answer to a chat request. Default: Echo.
	Reply func(r *Request) Reply
	// FirstByteDelay is waited before the response headers. Default 0.
	FirstByteDelay time.Duration
	// ChunkDelay is waited between stream chunks. Default 0.
	ChunkDelay time.Duration
	// Dimensions is the default embedding size. Default 64.
	Dimensions int
	// Created is the "created" time in every object. Default 1700000000, so
	// transcripts are stable.
	Created int64
	// Fingerprint is the system_fingerprint. Default "fp_fake".
	Fingerprint string
	// NoRecordBodies skips keeping request bodies (benchmarks).
	NoRecordBodies bool
	// NoRecord keeps no request at all (Requests, Received and Wait see none): for load measurements, where a
	// record of every request grows the heap without bound and the collector's work with it.
	NoRecord bool
	// Limits are the quota and rate limits of every key without limits of
	// its own in KeyLimits; each key (the bearer token, "" when none) is
	// counted apart. Default: none.
	Limits Limits
	// KeyLimits are limits for particular keys. Default: none.
	KeyLimits map[string]Limits
	// Now is the clock the rate limits refill by. Default time.Now; tests
	// pass a clock they advance, so that no test sleeps.
	Now func() time.Time
}

// Reply is the answer the fake sends to a chat request.
type Reply struct {
	// Content is streamed one word per chunk.
	Content string
	// Others are the contents of answers 1, 2, ... when the request asks for
	// n > 1 (answers past them repeat Content). Like OpenAI, a stream sends
	// each answer's chunks with its choice index, interleaved.
	Others []string
	// ToolCalls, when set, are sent instead of content, finish_reason
	// "tool_calls".
	ToolCalls []ToolCall
	// ChunkDelay, when set, replaces Config.ChunkDelay for this reply.
	ChunkDelay time.Duration
	// FirstTokenDelay is this reply's time to first token (see firsttoken.go). Default 0.
	FirstTokenDelay time.Duration
	// NoUsage leaves usage out, as some OpenAI-compatible servers do: no
	// usage chunk in a stream, no "usage" in a completion.
	NoUsage bool
}

// ToolCall is one function call in a Reply.
type ToolCall struct {
	ID        string
	Name      string
	Arguments string
}

// Fault is an injected failure for one chat request (Fail) or embeddings request (FailEmbeddings).
type Fault struct {
	// Status, when non-zero, is answered with OpenAI's error body for that
	// status (or Body when set).
	Status int
	// Body replaces the default error body.
	Body string
	// ContentType replaces the error's application/json (a Status 200 with
	// an event-stream Body makes a malformed stream).
	ContentType string
	// RetryAfter is sent as the Retry-After header.
	RetryAfter string
	// Drop closes the connection without any response.
	Drop bool
	// Hang waits until the caller gives up.
	Hang bool
	// DropAfter, for streams, closes the connection after this many chunks.
	DropAfter int
	// DropAfterHeaders, for streams, sends the 200 headers and then closes
	// the connection before any chunk.
	DropAfterHeaders bool
	// StallAfter, for streams, sends this many chunks and then nothing more,
	// keeping the connection open until the caller gives up.
	StallAfter int
	// EndlessEvent, for streams, sends one chunk and then a data: line that
	// never ends, until the caller gives up.
	EndlessEvent bool
	// Delay is waited before the fault (or the normal answer) happens.
	Delay time.Duration
}

// Request is what the fake recorded about one request.
type Request struct {
	Method string
	Path   string
	Header http.Header
	Body   []byte
	// Model, Stream, IncludeUsage and N (the number of answers, default 1)
	// are read from a chat or embeddings body.
	Model        string
	Stream       bool
	IncludeUsage bool
	N            int
	// Messages are the chat messages, decoded loosely.
	Messages []Message
	// Fault is the failure injected into this request, if any.
	Fault *Fault
	// Canceled reports that the caller went away (its context ended) before
	// the fake finished answering.
	Canceled bool
	// Chunks is how many stream chunks were written.
	Chunks int

	done chan struct{}
	raw  []byte
}

func (r *Request) bodyOrNil() []byte { return r.raw }

// Message is a chat message as the fake saw it.
type Message struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// Text returns a message's string content or its text parts joined.
func (m Message) Text() string {
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	if json.Unmarshal(m.Content, &parts) == nil {
		var b []string
		for _, p := range parts {
			b = append(b, p.Text)
		}
		return strings.Join(b, "\n")
	}
	return ""
}

// Server is a running fake upstream.
type Server struct {
	cfg    Config
	srv    *httptest.Server
	mu     sync.Mutex
	reqs   []*Request
	faults []Fault
	always *Fault
	// embedFaults are the embeddings requests' (FailEmbeddings).
	embedFaults embeddingFaults
	models      map[string]bool
	// arrived is closed, and replaced, whenever a request arrives.
	arrived chan struct{}
	// count is how many requests arrived, recorded or not.
	count int
	// cl100k counts embeddings inputs; it is loaded by the first embeddings
	// request, so chat-only tests never pay for it.
	cl100k     *tokenizer.Tokenizer
	cl100kErr  error
	cl100kOnce sync.Once

	keyLimits map[string]Limits
	keys      map[string]*keyState
	billed    map[Billed]int
	served    map[string]int
	refused   map[string]int
}

// NewServer starts a fake upstream; Close stops it.
func NewServer(cfg Config) *Server {
	if len(cfg.Models) == 0 {
		cfg.Models = []string{"gpt-4o-mini", "gpt-4o", "text-embedding-3-small"}
	}
	if cfg.Reply == nil {
		cfg.Reply = Echo
	}
	if cfg.Dimensions == 0 {
		cfg.Dimensions = 64
	}
	if cfg.Created == 0 {
		cfg.Created = 1700000000
	}
	if cfg.Fingerprint == "" {
		cfg.Fingerprint = "fp_fake"
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	s := &Server{cfg: cfg, models: map[string]bool{}, arrived: make(chan struct{}), keys: map[string]*keyState{},
		billed: map[Billed]int{}, served: map[string]int{}, refused: map[string]int{}}
	for k, l := range cfg.KeyLimits {
		if s.keyLimits == nil {
			s.keyLimits = map[string]Limits{}
		}
		s.keyLimits[k] = l
	}
	for _, m := range cfg.Models {
		s.models[m] = true
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", s.chat)
	mux.HandleFunc("POST /v1/embeddings", s.embeddings)
	mux.HandleFunc("GET /v1/models", s.listModels)
	mux.HandleFunc("GET /v1/models/{id}", s.getModel)
	s.srv = httptest.NewServer(s.record(mux))
	return s
}

// Echo answers "You said: <last user message>".
func Echo(r *Request) Reply {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == "user" {
			return Reply{Content: "You said: " + r.Messages[i].Text()}
		}
	}
	return Reply{Content: "Hello."}
}

// URL returns the API base URL, ending in /v1.
func (s *Server) URL() string { return s.srv.URL + "/v1" }

// Close shuts the server down, cancelling hung requests.
func (s *Server) Close() {
	s.srv.CloseClientConnections()
	s.srv.Close()
}

// Fail queues faults for the next chat requests, one each.
func (s *Server) Fail(faults ...Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = append(s.faults, faults...)
}

// FailAlways injects f into every chat request after the queued faults;
// nil stops it.
func (s *Server) FailAlways(f *Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.always = f
}

// Requests returns a snapshot of every request received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Request, len(s.reqs))
	for i, r := range s.reqs {
		out[i] = *r
	}
	return out
}

// Received waits until at least n requests have arrived, whether or not they
// have been answered yet.
func (s *Server) Received(ctx context.Context, n int) error {
	for {
		s.mu.Lock()
		got, arrived := len(s.reqs), s.arrived
		s.mu.Unlock()
		if got >= n {
			return nil
		}
		select {
		case <-arrived:
		case <-ctx.Done():
			return fmt.Errorf("wait for %d requests: %w", n, ctx.Err())
		}
	}
}

// Wait waits until request i (0-based) has been received and fully answered
// (or abandoned) and returns its record.
func (s *Server) Wait(ctx context.Context, i int) (Request, error) {
	if err := s.Received(ctx, i+1); err != nil {
		return Request{}, fmt.Errorf("wait for request %d: %w", i, ctx.Err())
	}
	s.mu.Lock()
	done := s.reqs[i].done
	s.mu.Unlock()
	select {
	case <-done:
		s.mu.Lock()
		defer s.mu.Unlock()
		return *s.reqs[i], nil
	case <-ctx.Done():
		return Request{}, fmt.Errorf("wait for request %d: %w", i, ctx.Err())
	}
}

type reqKey struct{}

func (s *Server) record(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), done: make(chan struct{})}
		body, _ := io.ReadAll(r.Body)
		// Exact keys only: encoding/json matches struct fields without
		// regard to case, and OpenAI does not ("streAm" is not "stream").
		var fields map[string]json.RawMessage
		_ = json.Unmarshal(body, &fields)
		_ = json.Unmarshal(fields["model"], &rec.Model)
		_ = json.Unmarshal(fields["stream"], &rec.Stream)
		_ = json.Unmarshal(fields["messages"], &rec.Messages)
		if json.Unmarshal(fields["n"], &rec.N) != nil || rec.N < 1 {
			rec.N = 1
		}
		var so map[string]json.RawMessage
		if json.Unmarshal(fields["stream_options"], &so) == nil {
			_ = json.Unmarshal(so["include_usage"], &rec.IncludeUsage)
		}
		rec.raw = body
		if !s.cfg.NoRecordBodies {
			rec.Body = body
		}
		s.mu.Lock()
		s.count++
		if !s.cfg.NoRecord {
			s.reqs = append(s.reqs, rec)
		}
		close(s.arrived)
		s.arrived = make(chan struct{})
		s.mu.Unlock()
		defer func() {
			s.mu.Lock()
			if r.Context().Err() != nil {
				rec.Canceled = true
			}
			rec.raw = nil
			s.mu.Unlock()
			close(rec.done)
		}()
		if s.cfg.APIKey != "" && r.Header.Get("Authorization") != "Bearer "+s.cfg.APIKey {
			s.refuse(w, errInvalidKey(bearer(r)))
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), reqKey{}, rec)))
	})
}

func (s *Server) nextFault() *Fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.faults) > 0 {
		f := s.faults[0]
		s.faults = s.faults[1:]
		return &f
	}
	if s.always != nil {
		f := *s.always
		return &f
	}
	return nil
}

func (s *Server) listModels(w http.ResponseWriter, r *http.Request) {
	data := make([]model, 0, len(s.cfg.Models))
	for _, id := range s.cfg.Models {
		data = append(data, model{ID: id, Object: "model", Created: s.cfg.Created, OwnedBy: "openai"})
	}
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": data})
}

func (s *Server) getModel(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if !s.models[id] {
		writeError(w, http.StatusNotFound, "", id)
		return
	}
	writeJSON(w, http.StatusOK, model{ID: id, Object: "model", Created: s.cfg.Created, OwnedBy: "openai"})
}

type model struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	OwnedBy string `json:"owned_by"`
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// writeError writes OpenAI's error body for status.
func writeError(w http.ResponseWriter, status int, body, modelID string, contentType ...string) {
	if body == "" {
		body = ErrorBody(status, modelID)
	}
	w.Header().Set("Content-Type", "application/json")
	if len(contentType) > 0 && contentType[0] != "" {
		w.Header().Set("Content-Type", contentType[0])
	}
	w.WriteHeader(status)
	_, _ = w.Write([]byte(body))
}

// ErrorBody returns the error body OpenAI sends for status.
func ErrorBody(status int, modelID string) string {
	type object = errorObject
	code := func(s string) *string { return &s }
	var o object
	switch status {
	case http.StatusUnauthorized:
		o = object{"Incorrect API key provided: sk-****.", "invalid_request_error", nil, code("invalid_api_key")}
	case http.StatusNotFound:
		o = object{"The model `" + modelID + "` does not exist or you do not have access to it.", "invalid_request_error", nil, code("model_not_found")}
	case http.StatusTooManyRequests:
		o = object{"Rate limit reached for requests", "requests", nil, code("rate_limit_exceeded")}
	case http.StatusBadRequest:
		o = object{"Invalid request.", "invalid_request_error", nil, nil}
	case http.StatusServiceUnavailable:
		o = object{"The server is overloaded or not ready yet.", "server_error", nil, nil}
	default:
		o = object{"The server had an error while processing your request. Sorry about that!", "server_error", nil, nil}
	}
	b, _ := json.Marshal(struct {
		Error object `json:"error"`
	}{o})
	return string(b)
}
