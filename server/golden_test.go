package server

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ragproxy/ragproxy/compat/openaitest"
	"github.com/ragproxy/ragproxy/upstream"
)

// transcript renders a response as status, the headers that matter and the
// body, normalised for golden comparison.
func transcript(resp *http.Response, body string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "HTTP %d\n", resp.StatusCode)
	var keys []string
	for k := range resp.Header {
		switch k {
		case "Date", "Content-Length", "Openai-Processing-Ms", "X-Request-Id":
			continue
		}
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "%s: %s\n", k, strings.Join(resp.Header[k], ","))
	}
	b.WriteString("\n")
	b.WriteString(body)
	return normalize(b.String())
}

func TestGoldenTranscripts(t *testing.T) {
	toolReply := func(*openaitest.Request) openaitest.Reply {
		return openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "call_1", Name: "get_weather", Arguments: `{"city":"Berkeley"}`}}}
	}
	tests := []struct {
		name   string
		fake   openaitest.Config
		faults []openaitest.Fault
		cfg    Config
		client upstream.Config
		body   string
		header []string
	}{
		{name: "stream.txt", body: `{"model":"ragproxy","stream":true,"messages":[{"role":"user","content":"hello world"}]}`},
		{name: "stream_usage.txt", body: `{"model":"gpt-4o","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"system","content":"Be brief."},{"role":"user","content":[{"type":"text","text":"hello"}]}]}`},
		{name: "stream_tools.txt", fake: openaitest.Config{Reply: toolReply},
			body: `{"model":"ragproxy","stream":true,"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object"}}}],"messages":[{"role":"user","content":"weather?"}]}`},
		{name: "complete.txt", body: `{"model":"ragproxy","max_completion_tokens":50,"messages":[{"role":"developer","content":"x"},{"role":"user","content":"hello"}]}`},
		{name: "complete_tools.txt", fake: openaitest.Config{Reply: toolReply},
			body: `{"model":"ragproxy","messages":[{"role":"user","content":"weather?"},{"role":"assistant","content":null,"tool_calls":[{"id":"call_0","type":"function","function":{"name":"get_weather","arguments":"{}"}}]},{"role":"tool","tool_call_id":"call_0","content":"sunny"}]}`},
		{name: "error_invalid_json.txt", body: `{"model":`},
		{name: "error_missing_messages.txt", body: `{"model":"ragproxy"}`},
		{name: "error_bad_role.txt", body: `{"messages":[{"role":"user","content":"a"},{"role":"robot","content":"b"}]}`},
		{name: "error_bad_content.txt", body: `{"messages":[{"role":"user","content":42}]}`},
		{name: "error_too_large.txt", cfg: Config{MaxBodyBytes: 64}, body: `{"messages":[{"role":"user","content":"` + strings.Repeat("x", 100) + `"}]}`},
		{name: "error_auth_missing.txt", cfg: Config{APIKeys: []string{"sk-client-key-123"}}, body: `{"messages":[{"role":"user","content":"a"}]}`},
		{name: "error_auth_wrong.txt", cfg: Config{APIKeys: []string{"sk-client-key-123"}}, body: `{"messages":[{"role":"user","content":"a"}]}`,
			header: []string{"Authorization", "Bearer sk-wrong-key-456"}},
		{name: "error_upstream_400.txt", faults: []openaitest.Fault{{Status: 400, Body: `{"error":{"message":"Invalid 'temperature': decimal above maximum value.","type":"invalid_request_error","param":"temperature","code":"decimal_above_max_value"}}`}},
			body: `{"messages":[{"role":"user","content":"a"}],"temperature":9}`},
		{name: "error_upstream_model.txt", body: `{"model":"no-such-model","messages":[{"role":"user","content":"a"}]}`},
		{name: "error_upstream_429.txt", faults: []openaitest.Fault{{Status: 429, RetryAfter: "7"}, {Status: 429, RetryAfter: "7"}},
			body: `{"stream":true,"messages":[{"role":"user","content":"a"}]}`},
		{name: "error_upstream_503.txt", faults: []openaitest.Fault{{Status: 503}, {Status: 503}},
			body: `{"messages":[{"role":"user","content":"a"}]}`},
		{name: "error_unreachable.txt", faults: []openaitest.Fault{{Drop: true}, {Drop: true}},
			body: `{"stream":true,"messages":[{"role":"user","content":"a"}]}`},
		{name: "error_timeout.txt", faults: []openaitest.Fault{{Hang: true}, {Hang: true}}, client: upstream.Config{FirstByteTimeout: 50 * time.Millisecond},
			body: `{"messages":[{"role":"user","content":"a"}]}`},
		{name: "error_after_headers.txt", faults: []openaitest.Fault{{Delay: 150 * time.Millisecond, Status: 500}, {Status: 500}},
			cfg: Config{Heartbeat: 100 * time.Millisecond}, body: `{"stream":true,"messages":[{"role":"user","content":"a"}]}`},
		{name: "heartbeat.txt", fake: openaitest.Config{FirstByteDelay: 150 * time.Millisecond},
			cfg: Config{Heartbeat: 100 * time.Millisecond}, body: `{"stream":true,"messages":[{"role":"user","content":"slow"}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, harnessOpts{cfg: tt.cfg, fake: tt.fake, client: tt.client})
			h.Fake.Fail(tt.faults...)
			resp, body := h.post(t, "/chat/completions", tt.body, tt.header...)
			if resp.Header.Get("X-Request-Id") == "" || resp.Header.Get("Openai-Processing-Ms") == "" {
				t.Errorf("missing x-request-id or openai-processing-ms: %v", resp.Header)
			}
			golden(t, tt.name, transcript(resp, body))
		})
	}
}

func TestGoldenOtherRoutes(t *testing.T) {
	tests := []struct {
		name, method, path string
		cfg                Config
	}{
		{name: "models.txt", method: "GET", path: "/models", cfg: Config{ListUpstreamModels: true}},
		{name: "model_alias.txt", method: "GET", path: "/models/ragproxy"},
		{name: "model_unknown.txt", method: "GET", path: "/models/gpt-9"},
		{name: "route_unknown.txt", method: "POST", path: "/embeddingz"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, harnessOpts{cfg: tt.cfg})
			var resp *http.Response
			var body string
			if tt.method == "GET" {
				resp, body = h.get(t, tt.path)
			} else {
				resp, body = h.post(t, tt.path, "{}")
			}
			golden(t, tt.name, transcript(resp, body))
		})
	}
}

// TestUpstreamModelsCached checks that /v1/models asks the upstream for its models once per TTL, also when many
// clients poll at once.
func TestUpstreamModelsCached(t *testing.T) {
	h := newHarness(t, harnessOpts{cfg: Config{ListUpstreamModels: true}})
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			resp, body := h.get(t, "/models")
			if resp.StatusCode != http.StatusOK || !strings.Contains(body, "gpt-4o-mini") {
				t.Errorf("GET /models: %d %s", resp.StatusCode, body)
			}
		})
	}
	wg.Wait()
	h.get(t, "/models")
	calls := 0
	for _, r := range h.Fake.Requests() {
		if r.Path == "/v1/models" {
			calls++
		}
	}
	if calls != 1 {
		t.Errorf("upstream model listings = %d, want 1", calls)
	}
}
