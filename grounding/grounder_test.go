package grounding

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ragproxy/ragproxy/compat/openaitest"
	"github.com/ragproxy/ragproxy/examples"
	"github.com/ragproxy/ragproxy/ingest"
	"github.com/ragproxy/ragproxy/retrieval"
	"github.com/ragproxy/ragproxy/server"
	"github.com/ragproxy/ragproxy/tokenizer"
)

var (
	exampleOnce      sync.Once
	exampleRetriever *retrieval.Retriever
	exampleErr       error
)

// exampleIndex ingests the bundled example site once per test binary.
func exampleIndex(t testing.TB) (*retrieval.Retriever, *tokenizer.Tokenizer) {
	t.Helper()
	tok, err := tokenizer.New()
	if err != nil {
		t.Fatal(err)
	}
	exampleOnce.Do(func() {
		root, err := os.MkdirTemp("", "ragproxy-example-")
		if err != nil {
			exampleErr = err
			return
		}
		site, dir := filepath.Join(root, "site"), filepath.Join(root, "index")
		sub, _ := fs.Sub(examples.Site, "site")
		if exampleErr = os.CopyFS(site, sub); exampleErr != nil {
			return
		}
		if _, exampleErr = ingest.Run(context.Background(), ingest.Config{Source: site, BaseURL: examples.BaseURL, IndexDir: dir}); exampleErr != nil {
			return
		}
		exampleRetriever, exampleErr = retrieval.Open(dir, nil, tok, retrieval.Config{})
	})
	if exampleErr != nil {
		t.Fatal(exampleErr)
	}
	return exampleRetriever, tok
}

const tuitionURL = "https://www.lakeshore-poly.example/tuition/"

func TestGroundedAnswerOnline(t *testing.T) {
	r, tok := exampleIndex(t)
	g := &Grounder{Retriever: r, Tokenizer: tok, SiteName: "Lakeshore Polytechnic"}
	answer := "In-state tuition is $4,850 per semester ([Tuition](" + tuitionURL + ")); see also " +
		"[the portal](https://invented.example/pay) for payment."
	h := newHarness(t, server.Config{Grounder: g}, replying(answer))

	resp, body := h.post(t, "/chat/completions", `{"model":"ragproxy","messages":[{"role":"user","content":"how much is in-state tuition per semester?"}]}`)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	var out struct {
		Choices []struct {
			Message struct{ Content string } `json:"message"`
		} `json:"choices"`
		Sources []struct{ URL, Title string } `json:"sources"`
	}
	if err := json.Unmarshal([]byte(body), &out); err != nil || len(out.Choices) != 1 {
		t.Fatalf("body %s: %v", body, err)
	}
	content := out.Choices[0].Message.Content
	if strings.Contains(content, "invented.example") || !strings.Contains(content, "see also the portal for payment") {
		t.Errorf("the invented link was not reduced to its text: %q", content)
	}
	if !strings.Contains(content, "**Sources**\n- [Tuition and Fees]("+tuitionURL+")") {
		t.Errorf("answer does not end with the cited source: %q", content)
	}
	if len(out.Sources) != 1 || out.Sources[0].URL != tuitionURL {
		t.Errorf("sources = %+v, want only the cited tuition page", out.Sources)
	}
	reqs := h.Fake.Requests()
	if len(reqs) != 1 {
		t.Fatalf("upstream saw %d requests, want 1", len(reqs))
	}
	sys := reqs[0].Messages[0]
	if sys.Role != "system" || !strings.Contains(sys.Text(), "<context>") || !strings.Contains(sys.Text(), "URL: "+tuitionURL) {
		t.Errorf("first upstream message is not the grounding prompt with the tuition page: %.300s", sys.Text())
	}
	if last := reqs[0].Messages[len(reqs[0].Messages)-1]; last.Text() != "how much is in-state tuition per semester?" {
		t.Errorf("the user's question was not forwarded as sent: %q", last.Text())
	}
}

func TestGroundedStreamSendsOpenWebUISourceEvents(t *testing.T) {
	r, tok := exampleIndex(t)
	g := &Grounder{Retriever: r, Tokenizer: tok}
	h := newHarness(t, server.Config{Grounder: g}, replying("It costs $4,850."))
	_, body := h.post(t, "/chat/completions", `{"model":"ragproxy","stream":true,"messages":[{"role":"user","content":"tuition cost?"}]}`,
		"X-OpenWebUI-Chat-Id", "c1")
	events := strings.Split(strings.TrimSpace(body), "\n\n")
	if events[len(events)-1] != "data: [DONE]" {
		t.Fatalf("stream does not end with [DONE]: %q", events[len(events)-1])
	}
	var sawSource, sawSourcesList bool
	for _, ev := range events {
		if strings.Contains(ev, `"type":"source"`) && strings.Contains(ev, `"document":[`) {
			sawSource = true
		}
		if strings.Contains(ev, `**Sources**`) {
			sawSourcesList = true
		}
	}
	if !sawSource || !sawSourcesList {
		t.Errorf("stream lacks the Open WebUI source event (%v) or the Sources list (%v):\n%s", sawSource, sawSourcesList, body)
	}
}

func TestGroundedOfflineAndGuardrails(t *testing.T) {
	r, tok := exampleIndex(t)
	g := &Grounder{Retriever: r, Tokenizer: tok, Offline: true}
	h := newHarness(t, server.Config{Grounder: g}, openaitest.Config{})
	tests := []struct {
		name, body string
		header     []string
		want       []string
	}{
		{"extractive answer", `{"messages":[{"role":"user","content":"how much is in-state tuition?"}]}`, nil,
			[]string{"No language model is configured", "$4,850", "**Sources**", tuitionURL}},
		{"nothing matches", `{"messages":[{"role":"user","content":"qwxz zzkv"}]}`, nil,
			[]string{"I don't know"}},
		{"title task", `{"messages":[{"role":"user","content":"### Task:\nGenerate a concise, 3-5 word title for the chat history."}]}`, nil,
			[]string{`{\"title\":`}},
		{"open webui task header", `{"messages":[{"role":"user","content":"tuition?"}]}`, []string{"X-OpenWebUI-Task", "tags_generation"},
			[]string{`{\"tags\":[]}`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := h.post(t, "/chat/completions", tt.body, tt.header...)
			if resp.StatusCode != 200 {
				t.Fatalf("status %d: %s", resp.StatusCode, body)
			}
			for _, w := range tt.want {
				if !strings.Contains(body, w) {
					t.Errorf("response lacks %q:\n%s", w, body)
				}
			}
			if !strings.Contains(body, `"completion_tokens":`) {
				t.Errorf("no usage in %s", body)
			}
		})
	}
	if n := len(h.Fake.Requests()); n != 0 {
		t.Errorf("offline answers made %d upstream calls", n)
	}
}

func TestRetrievalBypassedOnlineForTasks(t *testing.T) {
	r, tok := exampleIndex(t)
	g := &Grounder{Retriever: r, Tokenizer: tok}
	h := newHarness(t, server.Config{Grounder: g}, openaitest.Config{})
	for _, c := range []struct{ body, key, val string }{
		{`{"messages":[{"role":"user","content":"tuition?"}]}`, "X-Ragproxy-Retrieval", "off"},
		{`{"messages":[{"role":"user","content":"Please generate a concise, 5-word-or-less title for the conversation, using its same language, with no punctuation."}]}`, "X-Unrelated", "1"},
	} {
		if resp, body := h.post(t, "/chat/completions", c.body, c.key, c.val); resp.StatusCode != 200 {
			t.Fatalf("status %d: %s", resp.StatusCode, body)
		}
	}
	for i, req := range h.Fake.Requests() {
		if req.Messages[0].Role == "system" {
			t.Errorf("request %d was grounded, want it forwarded untouched", i)
		}
	}
}

func TestRetrieveEndpoint(t *testing.T) {
	r, tok := exampleIndex(t)
	g := &Grounder{Retriever: r, Tokenizer: tok}
	h := newHarness(t, server.Config{Grounder: g}, openaitest.Config{})
	resp, body := h.post(t, "/retrieve", `{"query":"how much is in-state tuition?"}`)
	var out retrieveResponse
	if err := json.Unmarshal([]byte(body), &out); err != nil || resp.StatusCode != 200 {
		t.Fatalf("status %d, %v: %s", resp.StatusCode, err, body)
	}
	if len(out.Pages) == 0 || out.Pages[0].URL != tuitionURL || !strings.Contains(out.Context, "$4,850") || len(out.Rewrites) == 0 {
		t.Errorf("retrieve = pages %+v, rewrites %v, context has fact %v", out.Pages, out.Rewrites, strings.Contains(out.Context, "$4,850"))
	}
	for _, stage := range []string{"analysis", "embed", "pages", "communities", "chunks", "context"} {
		if _, ok := out.Timings[stage]; !ok {
			t.Errorf("timings lack %q: %v", stage, out.Timings)
		}
	}
	for _, bad := range []struct{ body, param string }{
		{`{"query":""}`, "query"}, {`{}`, "query"}, {`{"messages":[{"role":"wizard","content":"x"}]}`, "messages[0].role"}, {`not json`, ""},
	} {
		resp, body := h.post(t, "/retrieve", bad.body)
		if resp.StatusCode != 400 || !strings.Contains(body, `"type":"invalid_request_error"`) || !strings.Contains(body, `"param":`) {
			t.Errorf("%s: status %d body %s, want a 400 OpenAI error", bad.body, resp.StatusCode, body)
		}
		if bad.param != "" && !strings.Contains(body, `"param":"`+bad.param+`"`) {
			t.Errorf("%s: body %s, want param %q", bad.body, body, bad.param)
		}
	}
}

// TestGrounderReportsRetrieval checks that every retrieval reaches OnRetrieval with its stage times, inside the
// request's context (so an observer can join them to the request's log line).
func TestGrounderReportsRetrieval(t *testing.T) {
	r, tok := exampleIndex(t)
	var mu sync.Mutex
	var got []server.Retrieval
	var ids []string
	g := &Grounder{Retriever: r, Tokenizer: tok, OnRetrieval: func(ctx context.Context, rr server.Retrieval) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, rr)
		ids = append(ids, server.RequestID(ctx))
	}}
	h := newHarness(t, server.Config{Grounder: g}, replying("It costs $4,850."))
	if resp, body := h.post(t, "/chat/completions", `{"messages":[{"role":"user","content":"how much is in-state tuition?"}]}`); resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 1 || !strings.HasPrefix(ids[0], "req_") {
		t.Fatalf("retrievals reported %d with request ids %q, want 1 inside a request", len(got), ids)
	}
	for _, stage := range []string{"analysis", "embed", "pages", "communities", "chunks", "context"} {
		if _, ok := got[0].Durations[stage]; !ok {
			t.Errorf("stage %q not reported: %v", stage, got[0].Durations)
		}
	}
	if got[0].Confidence <= 0 || got[0].Empty {
		t.Errorf("confidence %v empty %v, want a confident retrieval", got[0].Confidence, got[0].Empty)
	}
}
