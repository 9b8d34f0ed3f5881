package server

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ragproxy/ragproxy/compat"
)

// fakeGrounder returns a fixed Grounding and records what it saw.
type fakeGrounder struct {
	mu      sync.Mutex
	seen    []*GroundRequest
	ground  func() *Grounding
	failure error
}

func (g *fakeGrounder) Ground(_ context.Context, req *GroundRequest) (*Grounding, error) {
	g.mu.Lock()
	g.seen = append(g.seen, req)
	g.mu.Unlock()
	if g.failure != nil {
		return nil, g.failure
	}
	return g.ground(), nil
}

// upperFilter upper-cases content and appends a Sources trailer.
type upperFilter struct{}

func (upperFilter) Filter(d string) string { return strings.ToUpper(d) }
func (upperFilter) Trailer() string        { return "\n\nSources:\n- [Guide](https://example.edu/guide)" }

// recordingObserver keeps every event kind in order.
type recordingObserver struct {
	mu     sync.Mutex
	kinds  []EventKind
	usage  compat.Usage
	answer string
}

func (o *recordingObserver) Observe(_ context.Context, ev Event) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.kinds = append(o.kinds, ev.Kind)
	if ev.Kind == EventUsage {
		o.usage = ev.Usage
	}
	if ev.Kind == EventEnd {
		o.answer = ev.Content
	}
}

func (o *recordingObserver) CollectContent() bool { return true }

func TestGrounderSeam(t *testing.T) {
	sources := []compat.Source{{URL: "https://example.edu/guide", Title: "Guide"}}
	event := json.RawMessage(`{"type":"source","data":{"url":"https://example.edu/guide"}}`)
	tests := []struct {
		name      string
		grounding Grounding
		body      string
		golden    string
		// wantUpstreamUser is the last user text the upstream saw ("" = no call).
		wantUpstreamUser string
	}{
		{name: "replace messages", body: `{"stream":true,"messages":[{"role":"user","content":"when is enrolment?"}]}`,
			grounding:        Grounding{Messages: []compat.Message{compat.TextMessage("system", "Context: ..."), compat.TextMessage("user", "rewritten question")}},
			golden:           "ground_messages.txt",
			wantUpstreamUser: "rewritten question"},
		{name: "filter sources events stream", body: `{"stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hello"}]}`,
			grounding:        Grounding{Filter: upperFilter{}, Sources: sources, Events: []json.RawMessage{event}},
			golden:           "ground_filter_stream.txt",
			wantUpstreamUser: "hello"},
		{name: "filter sources non-stream", body: `{"messages":[{"role":"user","content":"hello"}]}`,
			grounding:        Grounding{Filter: upperFilter{}, Sources: sources},
			golden:           "ground_filter_complete.txt",
			wantUpstreamUser: "hello"},
		{name: "answer stream", body: `{"model":"ragproxy","stream":true,"messages":[{"role":"user","content":"unknown thing"}]}`,
			grounding: Grounding{Answer: &Answer{Text: "I don't know. The closest pages are listed below, and they may help you find the answer.",
				Usage: compat.Usage{PromptTokens: 5, CompletionTokens: 18, TotalTokens: 23}}, Sources: sources},
			golden: "ground_answer_stream.txt"},
		{name: "answer non-stream", body: `{"model":"ragproxy","messages":[{"role":"user","content":"unknown thing"}]}`,
			grounding: Grounding{Answer: &Answer{Text: "I don't know.", Usage: compat.Usage{PromptTokens: 5, CompletionTokens: 4, TotalTokens: 9}}, Sources: sources},
			golden:    "ground_answer_complete.txt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := &fakeGrounder{ground: func() *Grounding { gr := tt.grounding; return &gr }}
			obs := &recordingObserver{}
			h := newHarness(t, harnessOpts{cfg: Config{Grounder: g, Observer: obs}})
			resp, body := h.post(t, "/chat/completions", tt.body, "X-OpenWebUI-Chat-Id", "chat-42")
			golden(t, tt.golden, transcript(resp, body))

			if len(g.seen) != 1 || g.seen[0].Header.Get("X-Openwebui-Chat-Id") != "chat-42" {
				t.Errorf("grounder did not see the request headers")
			}
			reqs := h.Fake.Requests()
			if tt.wantUpstreamUser == "" {
				if len(reqs) != 0 {
					t.Errorf("answered locally but upstream got %d requests", len(reqs))
				}
			} else {
				if len(reqs) != 1 {
					t.Fatalf("upstream got %d requests, want 1", len(reqs))
				}
				msgs := reqs[0].Messages
				if got := msgs[len(msgs)-1].Text(); got != tt.wantUpstreamUser {
					t.Errorf("upstream last message = %q, want %q", got, tt.wantUpstreamUser)
				}
			}
			obs.mu.Lock()
			defer obs.mu.Unlock()
			if obs.kinds[0] != EventStart || obs.kinds[len(obs.kinds)-1] != EventEnd {
				t.Errorf("observer events %v must start with EventStart and end with EventEnd", obs.kinds)
			}
			if obs.usage.TotalTokens == 0 {
				t.Errorf("observer saw no usage")
			}
			if tt.grounding.Filter != nil && !strings.HasSuffix(obs.answer, upperFilter{}.Trailer()) {
				t.Errorf("observed answer %q lacks the trailer", obs.answer)
			}
		})
	}
}

func TestGrounderError(t *testing.T) {
	g := &fakeGrounder{failure: compat.InvalidRequest("messages", "context_length_exceeded", "Too long.")}
	h := newHarness(t, harnessOpts{cfg: Config{Grounder: g}})
	resp, body := h.post(t, "/chat/completions", `{"messages":[{"role":"user","content":"x"}]}`)
	want := `{"error":{"message":"Too long.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`
	if diff := cmp.Diff([]any{http.StatusBadRequest, want}, []any{resp.StatusCode, body}); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if n := len(h.Fake.Requests()); n != 0 {
		t.Errorf("upstream got %d requests after a grounder error", n)
	}
}
