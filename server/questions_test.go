package server

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/tidwall/gjson"

	"github.com/ragproxy/ragproxy/cache"
	"github.com/ragproxy/ragproxy/compat"
)

// questionRecorder keeps the questions the server logs; as the server's Observer it also counts the requests
// that ended, which have had their question logged (finish logs it before EventEnd).
type questionRecorder struct {
	mu    sync.Mutex
	qs    []Question
	ended chan struct{}
}

func newQuestionRecorder() *questionRecorder {
	return &questionRecorder{ended: make(chan struct{}, 16)}
}

func (r *questionRecorder) Observe(_ context.Context, ev Event) {
	if ev.Kind == EventEnd {
		r.ended <- struct{}{}
	}
}

func (r *questionRecorder) LogQuestion(_ context.Context, q Question) {
	r.mu.Lock()
	r.qs = append(r.qs, q)
	r.mu.Unlock()
}

// wait returns the logged questions once n more requests have ended (a stream's ends on its writer, after the
// client read the last frame).
func (r *questionRecorder) wait(t *testing.T, n int) []Question {
	t.Helper()
	for range n {
		select {
		case <-r.ended:
		case <-time.After(10 * time.Second):
			t.Fatal("no request ended within 10 s")
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Question(nil), r.qs...)
}

// responseID reads the chat completion id of a completion or of a stream's first chunk.
func responseID(body string) string {
	if strings.HasPrefix(body, "data: ") {
		body = strings.TrimPrefix(strings.SplitN(body, "\n", 2)[0], "data: ")
	}
	return gjson.Get(body, "id").String()
}

func TestQuestionLog(t *testing.T) {
	report := &QuestionReport{Question: "when is enrolment?", Outcome: OutcomeAnswered, Confidence: 0.7, Topic: "/guide/"}
	guide := []compat.Annotation{compat.Citation(guideURL, "Guide", 0, len(guideLink))}
	tests := []struct {
		name      string
		grounding Grounding
		body      string
		// want is the logged question, its times, ids and answer aside; nil: none logged.
		want *Question
	}{
		{name: "model answer stream",
			body:      `{"model":"site","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"when is enrolment?"}]}`,
			grounding: Grounding{NewFilter: newUpperFilter, Question: report},
			want: &Question{QuestionReport: *report, Model: "site", Key: "****-one", Cited: []string{guideURL}, Upstream: true,
				Usage: compat.Usage{PromptTokens: 6, CompletionTokens: 5, TotalTokens: 11}}},
		{name: "model answer non-stream",
			body:      `{"model":"site","messages":[{"role":"user","content":"when is enrolment?"}]}`,
			grounding: Grounding{NewFilter: newUpperFilter, Question: report},
			want: &Question{QuestionReport: *report, Model: "site", Key: "****-one", Cited: []string{guideURL}, Upstream: true,
				Usage: compat.Usage{PromptTokens: 6, CompletionTokens: 5, TotalTokens: 11}}},
		{name: "grounder answer",
			body: `{"model":"site","messages":[{"role":"user","content":"shuttle?"}]}`,
			grounding: Grounding{Answer: &Answer{Text: "I don't know. " + guideLink, Annotations: guide,
				Usage: compat.Usage{PromptTokens: 2, CompletionTokens: 3, TotalTokens: 5}},
				Question: &QuestionReport{Question: "shuttle?", Outcome: OutcomeUnanswered}},
			want: &Question{QuestionReport: QuestionReport{Question: "shuttle?", Outcome: OutcomeUnanswered}, Model: "site",
				Key: "****-one", Cited: []string{guideURL}, Usage: compat.Usage{PromptTokens: 2, CompletionTokens: 3, TotalTokens: 5}}},
		{name: "no report", body: `{"model":"site","messages":[{"role":"user","content":"thanks"}]}`},
		{name: "task", grounding: Grounding{Question: report},
			body: `{"model":"site","messages":[{"role":"user","content":"### Task:\nGenerate a concise title for the chat."}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := newQuestionRecorder()
			g := &fakeGrounder{ground: func() *Grounding { gr := tt.grounding; return &gr }}
			h := newHarness(t, harnessOpts{cfg: Config{Grounder: g, Questions: rec, Observer: rec, APIKeys: []string{"key-number-one"}, Models: []ModelAlias{{ID: "site"}}}})
			_, body := h.post(t, "/chat/completions", tt.body, "Authorization", "Bearer key-number-one")
			if tt.want == nil {
				if qs := rec.wait(t, 1); len(qs) != 0 {
					t.Fatalf("logged %+v", qs)
				}
				return
			}
			qs := rec.wait(t, 1)
			if len(qs) != 1 {
				t.Fatalf("logged %d questions, want 1", len(qs))
			}
			q := qs[0]
			if id := responseID(body); q.ResponseID != id || !strings.HasPrefix(id, "chatcmpl") {
				t.Errorf("response id %q, the client got %q", q.ResponseID, id)
			}
			if q.At.IsZero() || q.Latency <= 0 || !strings.HasPrefix(q.RequestID, "req_") || q.Answer == "" {
				t.Errorf("time %v, latency %v, request id %q, answer %q", q.At, q.Latency, q.RequestID, q.Answer)
			}
			if diff := cmp.Diff(*tt.want, q, cmpopts.IgnoreFields(Question{}, "RequestID", "ResponseID", "At", "Latency", "Answer")); diff != "" {
				t.Errorf("logged question (-want +got):\n%s", diff)
			}
		})
	}
}

// A cached answer replayed is a question asked again: logged with the report of the answer it replays.
func TestQuestionLogCacheHit(t *testing.T) {
	rec := newQuestionRecorder()
	report := &QuestionReport{Question: "when is enrolment?", Outcome: OutcomeAnswered, Confidence: 0.7}
	g := &fakeGrounder{ground: func() *Grounding { return &Grounding{NewFilter: newUpperFilter, Question: report} }}
	lru, err := cache.NewLRU(cache.LRUConfig{})
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, harnessOpts{cfg: Config{Grounder: g, Questions: rec, Observer: rec, Cache: lru, Models: []ModelAlias{{ID: "site"}}}})
	body := `{"model":"site","temperature":0,"messages":[{"role":"user","content":"when is enrolment?"}]}`
	h.post(t, "/chat/completions", body)
	rec.wait(t, 1)
	_, second := h.post(t, "/chat/completions", body)
	qs := rec.wait(t, 1)
	if len(qs) != 2 {
		t.Fatalf("logged %d questions, want 2", len(qs))
	}
	if qs[0].Cached || !qs[1].Cached || qs[1].Upstream || qs[1].QuestionReport != *report || qs[1].ResponseID != responseID(second) {
		t.Errorf("logged %+v", qs)
	}
	if len(g.seen) != 1 {
		t.Errorf("the grounder saw %d requests, want 1 (the second was a cache hit)", len(g.seen))
	}
}
