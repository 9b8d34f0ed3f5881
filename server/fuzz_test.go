package server

import (
	"net/http"
	"strings"
	"testing"
)

// FuzzChatCompletions posts arbitrary bodies to the proxy: nothing a client
// sends may produce a 5xx or crash it, and every answer is either a stream,
// a completion or an OpenAI error body.
func FuzzChatCompletions(f *testing.F) {
	seeds := []string{
		`{"messages":[{"role":"user","content":"hi"}]}`,
		`{"stream":true,"messages":[{"role":"user","content":"hi"}]}`,
		`{"stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":[{"type":"text","text":"x"}]}]}`,
		`{"messages":[{"role":"assistant","tool_calls":[]},{"role":"tool","tool_call_id":"a","content":"b"}]}`,
		`{"messages":[]}`, `{`, `[]`, `null`, `{"messages":[{"role":"user","content":null}]}`,
		`{"model":"gpt-4o","messages":[{"role":"user","content":"x"}],"n":2}`,
	}
	for _, s := range seeds {
		f.Add(s)
	}
	h := newHarness(f, harnessOpts{cfg: Config{MaxBodyBytes: 1 << 16}})
	f.Fuzz(func(t *testing.T, body string) {
		resp, got := h.post(t, "/chat/completions", body)
		if resp.StatusCode >= 500 {
			t.Fatalf("status %d for client input %q: %s", resp.StatusCode, body, got)
		}
		if resp.StatusCode != http.StatusOK && !strings.HasPrefix(got, `{"error":{`) {
			t.Fatalf("status %d without an OpenAI error body: %s", resp.StatusCode, got)
		}
		if strings.Contains(got, `data: {"error"`) {
			t.Fatalf("stream failed for client input %q: %s", body, got)
		}
	})
}
