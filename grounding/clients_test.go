package grounding

import (
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ragproxy/ragproxy/compat"
	"github.com/ragproxy/ragproxy/compat/openaitest"
	"github.com/ragproxy/ragproxy/internal/ssetest"
	"github.com/ragproxy/ragproxy/server"
)

// clientRequest is one request as a chat UI sends it (testdata/client_requests.json, written from the clients'
// published behaviour: Open WebUI's task prompts and headers, LibreChat's title methods) and what ragproxy must
// make of it.
type clientRequest struct {
	Client, Name string
	Header       map[string]string
	Body         json.RawMessage
	// Task is the task kind the gateway must see ("" for a question).
	Task string
	// Grounded requests get retrieval; Events ones also Open WebUI source events.
	Grounded, Events bool
	// Answer is the offline answer a task must get: JSON equal to Answer.JSON, or exactly Answer.Text.
	Answer *struct {
		JSON any
		Text *string
	}
}

func clientRequests(t *testing.T) []clientRequest {
	t.Helper()
	b, err := os.ReadFile("testdata/client_requests.json")
	if err != nil {
		t.Fatal(err)
	}
	var out []clientRequest
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func (c clientRequest) header() []string {
	var h []string
	for k, v := range c.Header {
		h = append(h, k, v)
	}
	return h
}

// TestClientRequestsClassified checks the gateway's task classification on every client request.
func TestClientRequestsClassified(t *testing.T) {
	for _, c := range clientRequests(t) {
		t.Run(c.Client+"/"+c.Name, func(t *testing.T) {
			req, err := compat.DecodeChatRequest(c.Body)
			if err != nil {
				t.Fatal(err)
			}
			h := http.Header{}
			for k, v := range c.Header {
				h.Set(k, v)
			}
			if got := server.TaskKind(h, req.Messages); got != c.Task {
				t.Errorf("task = %q, want %q", got, c.Task)
			}
		})
	}
}

// TestClientRequestsOffline checks that without a model every task gets an answer in the format it asks for and
// every question a grounded answer.
func TestClientRequestsOffline(t *testing.T) {
	r, tok := exampleIndex(t)
	h := newHarness(t, server.Config{Grounder: &Grounder{Retriever: r, Tokenizer: tok, Offline: true}}, openaitest.Config{})
	for _, c := range clientRequests(t) {
		t.Run(c.Client+"/"+c.Name, func(t *testing.T) {
			resp, body := h.post(t, "/chat/completions", string(c.Body), c.header()...)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d: %s", resp.StatusCode, body)
			}
			text := ssetest.Answer(t, body)
			switch {
			case c.Answer != nil && c.Answer.Text != nil:
				if text != *c.Answer.Text {
					t.Errorf("answer %q, want %q", text, *c.Answer.Text)
				}
			case c.Answer != nil:
				var got any
				if err := json.Unmarshal([]byte(text), &got); err != nil {
					t.Fatalf("answer %q is not JSON: %v", text, err)
				}
				if diff := cmp.Diff(c.Answer.JSON, got); diff != "" {
					t.Errorf("answer (-want +got):\n%s", diff)
				}
			case c.Grounded:
				if !strings.Contains(text, "No language model is configured") || !strings.Contains(text, "**Sources**") {
					t.Errorf("question not answered from the site: %q", text)
				}
			}
			if got := strings.Contains(body, `"type":"source"`); got != c.Events {
				t.Errorf("source events sent %v, want %v", got, c.Events)
			}
		})
	}
	if n := len(h.Fake.Requests()); n != 0 {
		t.Errorf("offline answers made %d upstream calls", n)
	}
}

// TestClientRequestsOnline checks that with a model questions are grounded and tasks go to the model as the
// client sent them.
func TestClientRequestsOnline(t *testing.T) {
	r, tok := exampleIndex(t)
	h := newHarness(t, server.Config{Grounder: &Grounder{Retriever: r, Tokenizer: tok}, Models: []server.ModelAlias{{ID: "lakeshore"}}},
		replying("An answer."))
	for _, c := range clientRequests(t) {
		t.Run(c.Client+"/"+c.Name, func(t *testing.T) {
			before := len(h.Fake.Requests())
			resp, body := h.post(t, "/chat/completions", string(c.Body), c.header()...)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d: %s", resp.StatusCode, body)
			}
			reqs := h.Fake.Requests()
			if len(reqs) != before+1 {
				t.Fatalf("upstream calls %d, want 1", len(reqs)-before)
			}
			sent, err := compat.DecodeChatRequest(c.Body)
			if err != nil {
				t.Fatal(err)
			}
			up := reqs[len(reqs)-1].Messages
			grounded := len(up) == len(sent.Messages)+1 && strings.Contains(up[0].Text(), "<context>")
			if grounded != c.Grounded {
				t.Errorf("grounded %v, want %v (upstream's first message %.80q)", grounded, c.Grounded, up[0].Text())
			}
			if !c.Grounded && (len(up) != len(sent.Messages) || up[len(up)-1].Text() != sent.Messages[len(sent.Messages)-1].Text()) {
				t.Errorf("task not forwarded as sent: %d messages upstream, %d sent", len(up), len(sent.Messages))
			}
		})
	}
}
