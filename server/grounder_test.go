package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/ragproxy/ragproxy/compat"
	"github.com/ragproxy/ragproxy/compat/openaitest"
	"github.com/ragproxy/ragproxy/internal/ssetest"
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

const (
	guideURL  = "https://example.edu/guide"
	guideLink = "[Guide](" + guideURL + ")"
	// upperTrailer is the Sources list upperFilter ends an answer with.
	upperTrailer = "\n\nSources:\n- " + guideLink
)

// upperFilter upper-cases content and appends a Sources trailer, whose link it annotates.
type upperFilter struct {
	sent int // characters sent before the trailer
}

func (f *upperFilter) Filter(d string) string {
	out := strings.ToUpper(d)
	f.sent += utf8.RuneCountInString(out)
	return out
}

func (f *upperFilter) Trailer() string { return upperTrailer }

func (f *upperFilter) Annotations() []compat.Annotation {
	start := f.sent + len(upperTrailer) - len(guideLink)
	return []compat.Annotation{compat.Citation(guideURL, "Guide", start, start+len(guideLink))}
}

func (f *upperFilter) Events() []json.RawMessage { return nil }

func newUpperFilter() ContentFilter { return &upperFilter{} }

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
	guide := []compat.Annotation{compat.Citation(guideURL, "Guide", 0, len(guideLink))}
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
			grounding:        Grounding{NewFilter: newUpperFilter, Events: []json.RawMessage{event}},
			golden:           "ground_filter_stream.txt",
			wantUpstreamUser: "hello"},
		{name: "filter sources non-stream", body: `{"messages":[{"role":"user","content":"hello"}]}`,
			grounding:        Grounding{NewFilter: newUpperFilter},
			golden:           "ground_filter_complete.txt",
			wantUpstreamUser: "hello"},
		{name: "answer stream", body: `{"model":"ragproxy","stream":true,"messages":[{"role":"user","content":"unknown thing"}]}`,
			grounding: Grounding{Answer: &Answer{Text: guideLink + " may help you find the answer, but I don't know it.",
				Annotations: guide, Usage: compat.Usage{PromptTokens: 5, CompletionTokens: 18, TotalTokens: 23}}},
			golden: "ground_answer_stream.txt"},
		{name: "answer non-stream", body: `{"model":"ragproxy","messages":[{"role":"user","content":"unknown thing"}]}`,
			grounding: Grounding{Answer: &Answer{Text: guideLink + ": I don't know.", Annotations: guide,
				Usage: compat.Usage{PromptTokens: 5, CompletionTokens: 4, TotalTokens: 9}}},
			golden: "ground_answer_complete.txt"},
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
			if tt.grounding.NewFilter != nil && !strings.HasSuffix(obs.answer, upperTrailer) {
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

// countingFilter marks the start of its answer and ends it with the number of deltas it saw, so an answer
// filtered by another answer's filter shows.
type countingFilter struct {
	deltas int
}

func (f *countingFilter) Filter(d string) string {
	f.deltas++
	if f.deltas == 1 {
		return ">>" + d
	}
	return d
}

func (f *countingFilter) Trailer() string { return fmt.Sprintf(" (%d deltas)", f.deltas) }

// Annotations cite the guide over the ">>" that starts the answer.
func (f *countingFilter) Annotations() []compat.Annotation {
	return []compat.Annotation{compat.Citation(guideURL, "Guide", 0, 2)}
}

func (f *countingFilter) Events() []json.RawMessage { return nil }

// TestGroundingManyAnswers checks a request for n answers: each is filtered on its own and ends with its own
// trailer and annotations, in the stream and in the completion.
func TestGroundingManyAnswers(t *testing.T) {
	g := &fakeGrounder{ground: func() *Grounding {
		return &Grounding{NewFilter: func() ContentFilter { return &countingFilter{} }}
	}}
	fake := openaitest.Config{Reply: func(*openaitest.Request) openaitest.Reply {
		return openaitest.Reply{Content: "alpha beta gamma", Others: []string{"delta epsilon"}}
	}}
	h := newHarness(t, harnessOpts{cfg: Config{Grounder: g}, fake: fake})
	want := map[int]string{0: ">>alpha beta gamma (4 deltas)", 1: ">>delta epsilon (3 deltas)"}

	resp, body := h.post(t, "/chat/completions", `{"stream":true,"n":2,"messages":[{"role":"user","content":"hello"}]}`)
	golden(t, "ground_many_stream.txt", transcript(resp, body))
	got := map[int]string{}
	roles := map[int]int{}
	var finishes, annotated []int
	for _, f := range ssetest.Frames(t, body) {
		for _, ch := range f.Chunk.Choices {
			got[ch.Index] += ch.Content
			if ch.Role == "assistant" {
				roles[ch.Index]++
			}
			if ch.FinishReason != "" {
				finishes = append(finishes, ch.Index)
			}
			if strings.Contains(f.Data, `"annotations":[{"type":"url_citation","url_citation":{"end_index":2,"start_index":0,"title":"Guide","url":"`+guideURL+`"}}]`) {
				annotated = append(annotated, ch.Index)
			}
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("streamed answers (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[int]int{0: 1, 1: 1}, roles); diff != "" {
		t.Errorf("role deltas per answer (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int{0, 1}, finishes); diff != "" {
		t.Errorf("finish chunks (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int{0, 1}, annotated); diff != "" {
		t.Errorf("answers whose trailer carries their annotations (-want +got):\n%s", diff)
	}

	resp, body = h.post(t, "/chat/completions", `{"n":2,"messages":[{"role":"user","content":"hello"}]}`)
	golden(t, "ground_many_complete.txt", transcript(resp, body))
	var completion struct {
		Choices []struct {
			Index   int `json:"index"`
			Message struct {
				Content     string              `json:"content"`
				Annotations []compat.Annotation `json:"annotations"`
			} `json:"message"`
		} `json:"choices"`
	}
	if err := json.Unmarshal([]byte(body), &completion); err != nil {
		t.Fatal(err)
	}
	got = map[int]string{}
	for _, c := range completion.Choices {
		got[c.Index] = c.Message.Content
		if diff := cmp.Diff((&countingFilter{}).Annotations(), c.Message.Annotations); diff != "" {
			t.Errorf("completion answer %d annotations (-want +got):\n%s", c.Index, diff)
		}
	}
	// Not streamed, each answer is one delta.
	if diff := cmp.Diff(map[int]string{0: ">>alpha beta gamma (1 deltas)", 1: ">>delta epsilon (1 deltas)"}, got); diff != "" {
		t.Errorf("completion answers (-want +got):\n%s", diff)
	}
}

// TestAnswerManyAnswers checks that an answer the proxy writes itself comes n times when n answers are asked
// for, with the usage of all of them.
func TestAnswerManyAnswers(t *testing.T) {
	g := &fakeGrounder{ground: func() *Grounding {
		return &Grounding{Answer: &Answer{Text: "I don't know.", Usage: compat.Usage{PromptTokens: 5, CompletionTokens: 4, TotalTokens: 9}}}
	}}
	h := newHarness(t, harnessOpts{cfg: Config{Grounder: g}})
	_, body := h.post(t, "/chat/completions", `{"stream":true,"stream_options":{"include_usage":true},"n":3,"messages":[{"role":"user","content":"x"}]}`)
	got := map[int]string{}
	var usage *compat.Usage
	finished := 0
	for _, f := range ssetest.Frames(t, body) {
		for _, ch := range f.Chunk.Choices {
			got[ch.Index] += ch.Content
			if ch.FinishReason == "stop" {
				finished++
			}
		}
		if f.Chunk.Usage != nil {
			usage = f.Chunk.Usage
		}
	}
	want := map[int]string{0: "I don't know.", 1: "I don't know.", 2: "I don't know."}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("streamed answers (-want +got):\n%s", diff)
	}
	if finished != 3 || usage == nil || *usage != (compat.Usage{PromptTokens: 5, CompletionTokens: 12, TotalTokens: 17}) {
		t.Errorf("finishes %d, usage %+v; want 3 and 5+12=17", finished, usage)
	}

	_, body = h.post(t, "/chat/completions", `{"n":2,"messages":[{"role":"user","content":"x"}]}`)
	info, err := compat.ParseCompletion([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	wantInfo := compat.CompletionInfo{Choices: []compat.CompletionChoice{{Content: "I don't know.", HasContent: true}, {Content: "I don't know.", HasContent: true}},
		Usage: &compat.Usage{PromptTokens: 5, CompletionTokens: 8, TotalTokens: 13}}
	if !strings.HasPrefix(info.ID, "chatcmpl-") {
		t.Errorf("completion id %q", info.ID)
	}
	info.ID = ""
	if diff := cmp.Diff(wantInfo, info); diff != "" {
		t.Errorf("completion (-want +got):\n%s", diff)
	}

	resp, body := h.post(t, "/chat/completions", `{"n":0,"messages":[{"role":"user","content":"x"}]}`)
	want0 := `{"error":{"message":"Invalid 'n': integer below minimum value. Expected a value >= 1, but got 0 instead.","type":"invalid_request_error","param":"n","code":"integer_below_min_value"}}`
	if diff := cmp.Diff([]any{http.StatusBadRequest, want0}, []any{resp.StatusCode, body}); diff != "" {
		t.Errorf("n = 0 (-want +got):\n%s", diff)
	}
}

// panickyFilter panics on the answer's second delta.
type panickyFilter struct{ n int }

func (f *panickyFilter) Filter(d string) string {
	if f.n++; f.n == 2 {
		panic("filter bug")
	}
	return d
}
func (f *panickyFilter) Trailer() string { return "" }

// TestPanicsAnswerAsErrors checks that a panic while answering, in the handler or mid-stream, reaches the client as
// OpenAI's server error, ends the request, and leaves the server serving.
func TestPanicsAnswerAsErrors(t *testing.T) {
	obs := &recordingObserver{}
	g := &fakeGrounder{ground: func() *Grounding { return &Grounding{NewFilter: func() ContentFilter { return &panickyFilter{} }} }}
	h := newHarness(t, harnessOpts{cfg: Config{Grounder: g, Observer: obs}})
	resp, body := h.post(t, "/chat/completions", `{"stream":true,"messages":[{"role":"user","content":"one two three"}]}`)
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, `data: {"error":{"message":`) || strings.Contains(body, "[DONE]") {
		t.Errorf("a stream that panics must end with an error frame and no [DONE]: %d\n%s", resp.StatusCode, body)
	}
	g.ground = func() *Grounding { panic("grounder bug") }
	resp, body = h.post(t, "/chat/completions", `{"messages":[{"role":"user","content":"hi"}]}`)
	if resp.StatusCode != http.StatusInternalServerError || !strings.Contains(body, `"type":"server_error"`) {
		t.Errorf("a handler that panics must answer OpenAI's 500: %d %s", resp.StatusCode, body)
	}
	obs.mu.Lock()
	starts, ends := 0, 0
	for _, k := range obs.kinds {
		switch k {
		case EventStart:
			starts++
		case EventEnd:
			ends++
		}
	}
	obs.mu.Unlock()
	if starts != 2 || ends != 2 {
		t.Errorf("requests started %d, ended %d; want both ended", starts, ends)
	}
	if resp, _ := h.get(t, "/models"); resp.StatusCode != http.StatusOK {
		t.Errorf("the server stopped serving after the panics: %d", resp.StatusCode)
	}
}

// TestGroundRequestPrompts checks that the Grounder receives the gateway's reading of the prompts: which messages
// are task prompts, and whether one opens with Open WebUI's "### Task:" heading.
func TestGroundRequestPrompts(t *testing.T) {
	tests := []struct {
		name        string
		messages    string
		wantHeading bool
		wantPrompts []bool
	}{
		{"question", `[{"role":"user","content":"When does enrolment open?"}]`, false, []bool{false}},
		{"open webui title", `[{"role":"user","content":"When does enrolment open?"},{"role":"assistant","content":"In May."},` +
			`{"role":"user","content":"### Task:\nGenerate a concise, 3-5 word title for the chat history."}]`,
			true, []bool{false, false, true}},
		{"librechat title", `[{"role":"system","content":"Provide a concise, 5-word-or-less title for the conversation."},` +
			`{"role":"user","content":"When does enrolment open?"}]`, false, []bool{true, false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := &fakeGrounder{ground: func() *Grounding { return &Grounding{} }}
			h := newHarness(t, harnessOpts{cfg: Config{Grounder: g}})
			if resp, body := h.post(t, "/chat/completions", `{"model":"ragproxy","messages":`+tt.messages+`}`); resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d: %s", resp.StatusCode, body)
			}
			g.mu.Lock()
			defer g.mu.Unlock()
			if len(g.seen) != 1 {
				t.Fatalf("grounded %d times, want 1", len(g.seen))
			}
			got := g.seen[0]
			if got.TaskHeading != tt.wantHeading {
				t.Errorf("TaskHeading = %v, want %v", got.TaskHeading, tt.wantHeading)
			}
			if diff := cmp.Diff(tt.wantPrompts, got.TaskPrompts); diff != "" {
				t.Errorf("TaskPrompts (-want +got):\n%s", diff)
			}
		})
	}
}
