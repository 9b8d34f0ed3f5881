package openaitest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/ragproxy/ragproxy/tokenizer"
)

// post sends body to path with key (none when "") and returns the status,
// headers and body.
func post(t *testing.T, s *Server, key, path, body string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, s.URL()+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, string(b)
}

// errBody is OpenAI's error body, written as the stand-in must write it.
func errBody(message, typ, param, code string) string {
	q := func(s string) string {
		if s == "" {
			return "null"
		}
		b, _ := json.Marshal(s)
		return string(b)
	}
	m, _ := json.Marshal(message)
	return fmt.Sprintf(`{"error":{"message":%s,"type":%q,"param":%s,"code":%s}}`, m, typ, q(param), q(code))
}

func cl100k(t *testing.T) *tokenizer.Tokenizer {
	t.Helper()
	tok, err := tokenizer.NewEncoding(tokenizer.CL100kBase)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// jsonStrings is a JSON array of n copies of s.
func jsonStrings(s string, n int) string {
	b, _ := json.Marshal(s)
	return "[" + strings.TrimSuffix(strings.Repeat(string(b)+",", n), ",") + "]"
}

func TestEmbeddingsRules(t *testing.T) {
	tok := cl100k(t)
	long := strings.Repeat(" a", 9000)
	big := strings.Repeat(" word", 7900) // under the per-input cap; 40 of them are over the per-request cap
	// Devanagari takes several times more cl100k tokens than o200k ones: this
	// text fits 8192 o200k tokens and not 8192 cl100k tokens.
	hindi := strings.Repeat(" भारत सरकार की आधिकारिक वेबसाइट", 700)
	o200k, err := tokenizer.New()
	if err != nil {
		t.Fatal(err)
	}
	if n := o200k.Count(hindi); n > maxEmbeddingInputTokens {
		t.Fatalf("the Hindi input has %d o200k tokens, the test needs it under %d", n, maxEmbeddingInputTokens)
	}
	contextErr := func(n int) string {
		return errBody(fmt.Sprintf("This model's maximum context length is 8192 tokens, however you requested %d tokens (%d in your prompt; 0 for the completion). Please reduce your prompt; or completion length.", n, n),
			"invalid_request_error", "", "")
	}
	invalidInput := errBody("'$.input' is invalid. Please check the API reference: https://platform.openai.com/docs/api-reference.", "invalid_request_error", "", "")
	tests := []struct {
		name   string
		body   string
		status int
		want   string // the error body, or for a 200 the usage
	}{
		{"one string", `{"model":"text-embedding-3-small","input":"hello world"}`, 200,
			fmt.Sprintf(`{"prompt_tokens":%d,"total_tokens":%[1]d}`, tok.Count("hello world"))},
		{"strings", `{"model":"text-embedding-3-small","input":["hello","wide world"]}`, 200,
			fmt.Sprintf(`{"prompt_tokens":%d,"total_tokens":%[1]d}`, tok.Count("hello")+tok.Count("wide world"))},
		{"token arrays count their ids", `{"model":"text-embedding-3-small","input":[[1,2,3],[4]]}`, 200,
			`{"prompt_tokens":4,"total_tokens":4}`},
		{"2048 inputs", `{"model":"text-embedding-3-small","input":` + jsonStrings("x", 2048) + `}`, 200,
			fmt.Sprintf(`{"prompt_tokens":%d,"total_tokens":%[1]d}`, 2048*tok.Count("x"))},
		{"2049 inputs", `{"model":"text-embedding-3-small","input":` + jsonStrings("x", 2049) + `}`, 400,
			errBody("Invalid 'input': array too long. Expected an array with maximum length 2048, but got an array with length 2049 instead.",
				"invalid_request_error", "input", "array_above_max_length")},
		{"empty string", `{"model":"text-embedding-3-small","input":""}`, 400, invalidInput},
		{"empty string in an array", `{"model":"text-embedding-3-small","input":["a",""]}`, 400, invalidInput},
		{"empty array", `{"model":"text-embedding-3-small","input":[]}`, 400, invalidInput},
		{"empty token array", `{"model":"text-embedding-3-small","input":[[1],[]]}`, 400, invalidInput},
		{"input over 8192 tokens", `{"model":"text-embedding-3-small","input":["a",` + mustJSON(long) + `]}`, 400,
			contextErr(tok.Count(long))},
		{"Hindi counted with cl100k", `{"model":"text-embedding-3-large","input":` + mustJSON(hindi) + `}`, 400,
			contextErr(tok.Count(hindi))},
		{"request over 300,000 tokens", `{"model":"text-embedding-3-small","input":` + jsonStrings(big, 40) + `}`, 400,
			errBody(fmt.Sprintf("Requested %d tokens, max 300000 tokens per request", 40*tok.Count(big)),
				"max_tokens_per_request", "", "max_tokens_per_request")},
		{"dimensions on text-embedding-3", `{"model":"text-embedding-3-small","input":"a","dimensions":8}`, 200,
			fmt.Sprintf(`{"prompt_tokens":%d,"total_tokens":%[1]d}`, tok.Count("a"))},
		{"dimensions on ada-002", `{"model":"text-embedding-ada-002","input":"a","dimensions":8}`, 400,
			errBody("This model does not support specifying dimensions.", "invalid_request_error", "", "")},
		{"zero dimensions", `{"model":"text-embedding-3-small","input":"a","dimensions":0}`, 400,
			errBody("Invalid 'dimensions': integer below minimum value. Expected a value >= 1, but got 0 instead.",
				"invalid_request_error", "dimensions", "integer_below_min_value")},
	}
	s := NewServer(Config{Models: []string{"text-embedding-3-small", "text-embedding-3-large", "text-embedding-ada-002"}})
	defer s.Close()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status, h, body := post(t, s, "", "/embeddings", tc.body)
			got := body
			if status == 200 {
				var resp struct {
					Usage json.RawMessage `json:"usage"`
				}
				if err := json.Unmarshal([]byte(body), &resp); err != nil {
					t.Fatal(err)
				}
				got = string(resp.Usage)
			} else if ct := h.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q", ct)
			}
			if diff := cmp.Diff([]any{tc.status, tc.want}, []any{status, got}); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func mustJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// Vectors have the requested dimensions.
func TestEmbeddingsDimensions(t *testing.T) {
	s := NewServer(Config{})
	defer s.Close()
	_, _, body := post(t, s, "", "/embeddings", `{"model":"text-embedding-3-small","input":["a"],"dimensions":8}`)
	var resp struct {
		Data []struct {
			Embedding []float32 `json:"embedding"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(body), &resp); err != nil || len(resp.Data) != 1 {
		t.Fatalf("%v: %s", err, body)
	}
	if diff := cmp.Diff(Vector("a", 8), resp.Data[0].Embedding); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestReasoningModelRules(t *testing.T) {
	msgs := `"messages":[{"role":"user","content":"hi"}]`
	temperature := func(v string) string {
		return errBody("Unsupported value: 'temperature' does not support "+v+" with this model. Only the default (1) value is supported.",
			"invalid_request_error", "temperature", "unsupported_value")
	}
	maxTokens := errBody("Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
		"invalid_request_error", "max_tokens", "unsupported_parameter")
	tests := []struct {
		name, body string
		status     int
		want       string // the error body; "" for a 200
	}{
		{"o3-mini temperature 0", `{"model":"o3-mini",` + msgs + `,"temperature":0}`, 400, temperature("0")},
		{"o1 temperature 0.2", `{"model":"o1",` + msgs + `,"temperature":0.2}`, 400, temperature("0.2")},
		{"gpt-5-mini temperature 0.7", `{"model":"gpt-5-mini",` + msgs + `,"temperature":0.7}`, 400, temperature("0.7")},
		{"gpt-5-mini temperature 1", `{"model":"gpt-5-mini",` + msgs + `,"temperature":1}`, 200, ""},
		{"o4-mini temperature null", `{"model":"o4-mini",` + msgs + `,"temperature":null}`, 200, ""},
		{"gpt-5 max_tokens", `{"model":"gpt-5",` + msgs + `,"max_tokens":100}`, 400, maxTokens},
		{"o3 max_tokens in a stream", `{"model":"o3",` + msgs + `,"max_tokens":100,"stream":true}`, 400, maxTokens},
		{"o3 max_completion_tokens", `{"model":"o3",` + msgs + `,"max_completion_tokens":100}`, 200, ""},
		{"gpt-4o-mini takes both", `{"model":"gpt-4o-mini",` + msgs + `,"temperature":0,"max_tokens":100}`, 200, ""},
		{"a key in another case is not the parameter", `{"model":"o3",` + msgs + `,"Temperature":0}`, 200, ""},
	}
	s := NewServer(Config{Models: []string{"o1", "o3", "o3-mini", "o4-mini", "gpt-5", "gpt-5-mini", "gpt-4o-mini"}})
	defer s.Close()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status, _, body := post(t, s, "", "/chat/completions", tc.body)
			if status == 200 {
				body = ""
			}
			if diff := cmp.Diff([]any{tc.status, tc.want}, []any{status, body}); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	if diff := cmp.Diff(map[string]int{"unsupported_value": 3, "unsupported_parameter": 2}, s.Stats().Refused); diff != "" {
		t.Errorf("refusals (-want +got):\n%s", diff)
	}
}

func TestIsReasoningModel(t *testing.T) {
	got := map[string]bool{}
	for _, m := range []string{"o1", "o1-mini", "o3", "o3-pro", "o4-mini", "gpt-5", "gpt-5-mini", "gpt-5-nano",
		"gpt-4o", "gpt-4o-mini", "gpt-4.1", "omni-moderation-latest", "llama3"} {
		got[m] = IsReasoningModel(m)
	}
	want := map[string]bool{"o1": true, "o1-mini": true, "o3": true, "o3-pro": true, "o4-mini": true, "gpt-5": true,
		"gpt-5-mini": true, "gpt-5-nano": true, "gpt-4o": false, "gpt-4o-mini": false, "gpt-4.1": false,
		"omni-moderation-latest": false, "llama3": false}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// Usage comes with every completion and, when asked for, in a stream's last
// chunk, and agrees with what Stats billed.
func TestChatUsage(t *testing.T) {
	s := NewServer(Config{Models: []string{"gpt-5-mini"}})
	defer s.Close()
	_, _, body := post(t, s, "", "/chat/completions", `{"model":"gpt-5-mini","messages":[{"role":"user","content":"one two"}]}`)
	var comp struct {
		Usage *usage `json:"usage"`
	}
	if err := json.Unmarshal([]byte(body), &comp); err != nil || comp.Usage == nil {
		t.Fatalf("no usage (%v): %s", err, body)
	}
	_, _, stream := post(t, s, "", "/chat/completions", `{"model":"gpt-5-mini","messages":[{"role":"user","content":"one two"}],"stream":true,"stream_options":{"include_usage":true}}`)
	events := strings.Split(strings.TrimSpace(stream), "\n\n")
	if len(events) < 2 || events[len(events)-1] != "data: [DONE]" {
		t.Fatalf("stream: %q", stream)
	}
	var last struct {
		Choices []json.RawMessage `json:"choices"`
		Usage   *usage            `json:"usage"`
	}
	if err := json.Unmarshal([]byte(strings.TrimPrefix(events[len(events)-2], "data: ")), &last); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]any{comp.Usage, 0}, []any{last.Usage, len(last.Choices)}); diff != "" {
		t.Errorf("last chunk (-want the completion's usage, no choices +got):\n%s", diff)
	}
	_, _, plain := post(t, s, "", "/chat/completions", `{"model":"gpt-5-mini","messages":[{"role":"user","content":"one two"}],"stream":true}`)
	if strings.Contains(plain, `"usage"`) {
		t.Errorf("usage in a stream that did not ask for it: %s", plain)
	}
	st := s.Stats()
	want := Stats{Tokens: map[Billed]int{{"chat/completions", "gpt-5-mini"}: 3 * comp.Usage.TotalTokens},
		Served: map[string]int{"chat/completions": 3}, Refused: map[string]int{}}
	if diff := cmp.Diff(want, st); diff != "" {
		t.Errorf("stats (-want +got):\n%s", diff)
	}
}

// clock is a clock tests advance by hand.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

var rateHeaders = []string{"x-ratelimit-limit-requests", "x-ratelimit-limit-tokens", "x-ratelimit-remaining-requests",
	"x-ratelimit-remaining-tokens", "x-ratelimit-reset-requests", "x-ratelimit-reset-tokens", "Retry-After"}

// limitHeaders are the rate-limit headers of h, by name; absent ones are left out.
func limitHeaders(h http.Header) map[string]string {
	out := map[string]string{}
	for _, k := range rateHeaders {
		if v := h.Get(k); v != "" {
			out[k] = v
		}
	}
	return out
}

func TestRateLimits(t *testing.T) {
	tok := cl100k(t)
	word := tok.Count("hello") // each request below embeds "hello" once
	const rpm, tpm = 2, 600
	embed := `{"model":"text-embedding-3-small","input":"hello"}`
	headers := func(reqsLeft int, tokensLeft int, resetReqs, resetTokens string) map[string]string {
		return map[string]string{"x-ratelimit-limit-requests": "2", "x-ratelimit-limit-tokens": "600",
			"x-ratelimit-remaining-requests": fmt.Sprint(reqsLeft), "x-ratelimit-remaining-tokens": fmt.Sprint(tokensLeft),
			"x-ratelimit-reset-requests": resetReqs, "x-ratelimit-reset-tokens": resetTokens}
	}
	// A token refills in 100ms at 600 per minute, a request in 30s at 2.
	tokenReset := func(n int) string { return formatReset(time.Duration(n) * time.Minute / tpm) }

	for _, retryAfter := range []bool{false, true} {
		t.Run(fmt.Sprintf("Retry-After %v", retryAfter), func(t *testing.T) {
			c := newClock()
			s := NewServer(Config{Now: c.Now, Limits: Limits{RPM: rpm, TPM: tpm, RetryAfter: retryAfter}})
			defer s.Close()
			type answer struct {
				Status  int
				Headers map[string]string
				Body    string
			}
			call := func(body string) answer {
				status, h, b := post(t, s, "sk-a", "/embeddings", body)
				if status == 200 {
					b = ""
				}
				return answer{status, limitHeaders(h), b}
			}
			got := []answer{call(embed), call(embed), call(embed)}
			limited := answer{429, headers(0, tpm-2*word, "1m0s", tokenReset(2*word)),
				errBody("Rate limit reached for text-embedding-3-small in organization org-fake on requests per min (RPM): Limit 2, Used 2, Requested 1. Please try again in 30s. Visit https://platform.openai.com/account/rate-limits to learn more.",
					"requests", "", "rate_limit_exceeded")}
			if retryAfter {
				limited.Headers["Retry-After"] = "30"
			}
			want := []answer{
				{200, headers(1, tpm-word, "30s", tokenReset(word)), ""},
				{200, headers(0, tpm-2*word, "1m0s", tokenReset(2*word)), ""},
				limited,
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			// Waiting out the reset clears a rate limit.
			c.Advance(30 * time.Second)
			if a := call(embed); a.Status != 200 {
				t.Errorf("after 30s: %+v", a)
			}
			// Another key has limits of its own.
			if status, _, b := post(t, s, "sk-b", "/embeddings", embed); status != 200 {
				t.Errorf("another key: %d %s", status, b)
			}
			if diff := cmp.Diff(map[string]int{"rate_limit_exceeded": 1}, s.Stats().Refused); diff != "" {
				t.Errorf("refusals (-want +got):\n%s", diff)
			}
		})
	}

	t.Run("tokens", func(t *testing.T) {
		c := newClock()
		s := NewServer(Config{Now: c.Now, Limits: Limits{TPM: tpm}})
		defer s.Close()
		text := strings.Repeat(" hello", 200)
		n := tok.Count(text)
		body := `{"model":"text-embedding-3-small","input":` + mustJSON(text) + `}`
		for range tpm / n {
			if status, _, b := post(t, s, "sk-a", "/embeddings", body); status != 200 {
				t.Fatalf("%d %s", status, b)
			}
		}
		left := tpm - tpm/n*n
		status, h, b := post(t, s, "sk-a", "/embeddings", body)
		wait := time.Duration(n-left) * time.Minute / tpm
		want := []any{429, map[string]string{"x-ratelimit-limit-tokens": "600", "x-ratelimit-remaining-tokens": fmt.Sprint(left),
			"x-ratelimit-reset-tokens": tokenReset(tpm - left)},
			errBody(fmt.Sprintf("Rate limit reached for text-embedding-3-small in organization org-fake on tokens per min (TPM): Limit 600, Used %d, Requested %d. Please try again in %s. Visit https://platform.openai.com/account/rate-limits to learn more.",
				tpm-left, n, formatReset(wait)), "tokens", "", "rate_limit_exceeded")}
		if diff := cmp.Diff(want, []any{status, limitHeaders(h), b}); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
		c.Advance(wait)
		if status, _, b := post(t, s, "sk-a", "/embeddings", body); status != 200 {
			t.Errorf("after %s: %d %s", wait, status, b)
		}
		// A request larger than the whole limit never passes.
		huge := `{"model":"text-embedding-3-small","input":` + jsonStrings(text, tpm/n+1) + `}`
		c.Advance(time.Hour)
		status, _, b = post(t, s, "sk-a", "/embeddings", huge)
		wantTooLarge := errBody(fmt.Sprintf("Request too large for text-embedding-3-small in organization org-fake on tokens per min (TPM): Limit 600, Requested %d. The input or output tokens must be reduced in order to run successfully. Visit https://platform.openai.com/account/rate-limits to learn more.",
			(tpm/n+1)*n), "tokens", "", "rate_limit_exceeded")
		if diff := cmp.Diff([]any{429, wantTooLarge}, []any{status, b}); diff != "" {
			t.Errorf("too large (-want +got):\n%s", diff)
		}
	})

	t.Run("chat counts max_completion_tokens", func(t *testing.T) {
		c := newClock()
		s := NewServer(Config{Now: c.Now, Limits: Limits{TPM: 100}})
		defer s.Close()
		status, h, _ := post(t, s, "sk-a", "/chat/completions", `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"one two"}],"max_completion_tokens":50}`)
		// The prompt is two words and 3 per message in the fake's count.
		if diff := cmp.Diff([]any{200, "45"}, []any{status, h.Get("x-ratelimit-remaining-tokens")}); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})
}

func TestQuota(t *testing.T) {
	c := newClock()
	s := NewServer(Config{Now: c.Now, Limits: Limits{Quota: 5}})
	defer s.Close()
	tok := cl100k(t)
	body := `{"model":"text-embedding-3-small","input":"three little words"}`
	n := tok.Count("three little words")
	served := 0
	for ; served*n < 5; served++ {
		if status, _, b := post(t, s, "sk-a", "/embeddings", body); status != 200 {
			t.Fatalf("request %d: %d %s", served, status, b)
		}
	}
	quota := errBody("You exceeded your current quota, please check your plan and billing details. For more information on this error, read the docs: https://platform.openai.com/docs/guides/error-codes/api-errors.",
		"insufficient_quota", "", "insufficient_quota")
	for _, wait := range []time.Duration{0, time.Minute, 24 * time.Hour} {
		c.Advance(wait)
		status, h, b := post(t, s, "sk-a", "/embeddings", body)
		if diff := cmp.Diff([]any{429, quota, ""}, []any{status, b, h.Get("Retry-After")}); diff != "" {
			t.Errorf("after %s (-want +got):\n%s", wait, diff)
		}
		status, _, b = post(t, s, "sk-a", "/chat/completions", `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"x"}]}`)
		if diff := cmp.Diff([]any{429, quota}, []any{status, b}); diff != "" {
			t.Errorf("chat after %s (-want +got):\n%s", wait, diff)
		}
	}
	// Another key has its own budget; raising the budget tops the key up.
	if status, _, _ := post(t, s, "sk-b", "/embeddings", body); status != 200 {
		t.Errorf("another key: %d", status)
	}
	s.SetLimits("sk-a", Limits{Quota: 1000})
	if status, _, _ := post(t, s, "sk-a", "/embeddings", body); status != 200 {
		t.Errorf("topped up: %d", status)
	}
	want := Stats{Tokens: map[Billed]int{{"embeddings", "text-embedding-3-small"}: (served + 2) * n},
		Served: map[string]int{"embeddings": served + 2}, Refused: map[string]int{"insufficient_quota": 6}}
	if diff := cmp.Diff(want, s.Stats()); diff != "" {
		t.Errorf("stats (-want +got):\n%s", diff)
	}
}

func TestAuthentication(t *testing.T) {
	s := NewServer(Config{APIKey: "sk-right-0123456789"})
	defer s.Close()
	tests := []struct {
		name, key string
		status    int
		want      string
	}{
		{"right key", "sk-right-0123456789", 200, ""},
		{"wrong key", "sk-wrong-0123456789", 401, errBody("Incorrect API key provided: sk-*****6789. You can find your API key at https://platform.openai.com/account/api-keys.",
			"invalid_request_error", "", "invalid_api_key")},
		{"no key", "", 401, errBody("You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY), or as the password field (with blank username) if you're accessing the API from your browser and are prompted for a username and password. You can obtain an API key from https://platform.openai.com/account/api-keys.",
			"invalid_request_error", "", "invalid_api_key")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status, _, body := post(t, s, tc.key, "/embeddings", `{"model":"text-embedding-3-small","input":"a"}`)
			if status == 200 {
				body = ""
			}
			if diff := cmp.Diff([]any{tc.status, tc.want}, []any{status, body}); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	if diff := cmp.Diff(map[string]int{"invalid_api_key": 2}, s.Stats().Refused); diff != "" {
		t.Errorf("refusals (-want +got):\n%s", diff)
	}
}

func TestFormatReset(t *testing.T) {
	got := map[time.Duration]string{}
	for _, d := range []time.Duration{0, -time.Second, 20 * time.Millisecond, time.Second, 1500 * time.Millisecond,
		6 * time.Minute, time.Millisecond + time.Microsecond, 100 * time.Microsecond} {
		got[d] = formatReset(d)
	}
	want := map[time.Duration]string{0: "0s", -time.Second: "0s", 20 * time.Millisecond: "20ms", time.Second: "1s",
		1500 * time.Millisecond: "1.5s", 6 * time.Minute: "6m0s", time.Millisecond + time.Microsecond: "2ms",
		100 * time.Microsecond: "1ms"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// Concurrent requests share a key's limit: at a standing clock exactly RPM of
// them pass.
func TestRateLimitsConcurrent(t *testing.T) {
	c := newClock()
	s := NewServer(Config{Now: c.Now, Limits: Limits{RPM: 10}})
	defer s.Close()
	statuses := make([]int, 30)
	var wg sync.WaitGroup
	for i := range statuses {
		wg.Go(func() {
			req, _ := http.NewRequest(http.MethodPost, s.URL()+"/chat/completions",
				strings.NewReader(`{"model":"gpt-4o-mini","messages":[{"role":"user","content":"x"}]}`))
			req.Header.Set("Authorization", "Bearer sk-a")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			statuses[i] = resp.StatusCode
		})
	}
	wg.Wait()
	got := map[int]int{}
	for _, st := range statuses {
		got[st]++
	}
	if diff := cmp.Diff(map[int]int{200: 10, 429: 20}, got); diff != "" {
		t.Errorf("statuses (-want +got):\n%s", diff)
	}
	st := s.Stats()
	if diff := cmp.Diff([]int{10, 20}, []int{st.Served["chat/completions"], st.Refused["rate_limit_exceeded"]}); diff != "" {
		t.Errorf("stats (-want +got):\n%s", diff)
	}
}
