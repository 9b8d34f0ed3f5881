package server

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ragproxy/ragproxy/cache"
	"github.com/ragproxy/ragproxy/compat/openaitest"
	"github.com/ragproxy/ragproxy/internal/redistest"
	"github.com/ragproxy/ragproxy/ratelimit"
)

// failingStore is a rate-limit store that is down.
type failingStore struct{}

func (failingStore) Take(context.Context, string, float64, ratelimit.Limit, bool) (ratelimit.Result, error) {
	return ratelimit.Result{}, errors.New("connection refused")
}

func TestRateLimits(t *testing.T) {
	const ask = `{"messages":[{"role":"user","content":"one two three"}]}`
	keys := []string{"sk-alice-0000", "sk-bob-000000"}
	t.Run("requests", func(t *testing.T) {
		h := newHarness(t, harnessOpts{cfg: Config{APIKeys: keys, RateLimits: RateLimits{RequestsPerMinute: 2}}})
		for i := range 2 {
			resp, body := h.post(t, "/chat/completions", ask, "Authorization", "Bearer "+keys[0])
			if resp.StatusCode != 200 || resp.Header.Get("X-Ratelimit-Limit-Requests") != "2" ||
				resp.Header.Get("X-Ratelimit-Remaining-Requests") != []string{"1", "0"}[i] {
				t.Fatalf("request %d: %d %v %s", i, resp.StatusCode, resp.Header, body)
			}
		}
		resp, body := h.post(t, "/chat/completions", ask, "Authorization", "Bearer "+keys[0])
		if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" ||
			!strings.Contains(body, `"type":"requests"`) || !strings.Contains(body, `"code":"rate_limit_exceeded"`) {
			t.Errorf("past the limit: %d %v %s", resp.StatusCode, resp.Header, body)
		}
		if resp, _ := h.post(t, "/chat/completions", ask, "Authorization", "Bearer "+keys[1]); resp.StatusCode != 200 {
			t.Errorf("another key was limited too: %d", resp.StatusCode)
		}
		if n := len(h.Fake.Requests()); n != 3 {
			t.Errorf("upstream calls = %d, want 3 (a refused request never goes upstream)", n)
		}
	})
	t.Run("tokens count the answer", func(t *testing.T) {
		// ask is estimated at 14 tokens and answered with 5 ("You said: one two three"); the second request at
		// 11. Of 28 tokens, the second fits only if the answer was not counted.
		h := newHarness(t, harnessOpts{cfg: Config{RateLimits: RateLimits{TokensPerMinute: 28}}})
		resp, body := h.post(t, "/chat/completions", ask)
		if resp.StatusCode != 200 {
			t.Fatalf("first: %d %s", resp.StatusCode, body)
		}
		resp, body = h.post(t, "/chat/completions", `{"messages":[{"role":"user","content":"x"}]}`)
		if resp.StatusCode != http.StatusTooManyRequests || !strings.Contains(body, `"type":"tokens"`) {
			t.Errorf("the answer's tokens were not counted: %d %s", resp.StatusCode, body)
		}
	})
	t.Run("tokens count an answer without usage", func(t *testing.T) {
		// An upstream that reports no usage: the answer (60 words, about 300 bytes) is charged at four bytes a
		// token, more than the 50 the minute allows, so the next request waits.
		long := strings.TrimSpace(strings.Repeat("answer ", 60))
		for _, stream := range []bool{false, true} {
			h := newHarness(t, harnessOpts{cfg: Config{RateLimits: RateLimits{TokensPerMinute: 50}},
				fake: openaitest.Config{Reply: func(*openaitest.Request) openaitest.Reply {
					return openaitest.Reply{Content: long, NoUsage: true}
				}}})
			first := `{"stream":` + boolJSON(stream) + `,"messages":[{"role":"user","content":"one two three"}]}`
			resp, body := h.post(t, "/chat/completions", first)
			if resp.StatusCode != 200 || strings.Contains(body, `"usage"`) && !stream {
				t.Fatalf("stream %v, first: %d %s", stream, resp.StatusCode, body)
			}
			resp, body = h.post(t, "/chat/completions", `{"messages":[{"role":"user","content":"x"}]}`)
			if resp.StatusCode != http.StatusTooManyRequests || !strings.Contains(body, `"type":"tokens"`) {
				t.Errorf("stream %v: an answer without usage was not charged: %d %s", stream, resp.StatusCode, body)
			}
		}
	})
	t.Run("replicas share Redis", func(t *testing.T) {
		r, err := cache.NewRedis(cache.RedisConfig{URL: redistest.URL(t), Timeout: 5 * time.Second,
			Prefix: "test:" + t.Name() + ":" + time.Now().Format(time.RFC3339Nano) + ":"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close() })
		limits := RateLimits{RequestsPerMinute: 3, Store: ratelimit.NewRedis(r.Scripter(), r.Prefix())}
		a := newHarness(t, harnessOpts{cfg: Config{APIKeys: keys, RateLimits: limits}})
		b := newHarness(t, harnessOpts{cfg: Config{APIKeys: keys, RateLimits: limits}})
		var statuses []int
		for _, h := range []*harness{a, b, a, b} {
			resp, _ := h.post(t, "/chat/completions", ask, "Authorization", "Bearer "+keys[0])
			statuses = append(statuses, resp.StatusCode)
		}
		if statuses[3] != http.StatusTooManyRequests || statuses[0] != 200 || statuses[2] != 200 {
			t.Errorf("statuses across two replicas = %v, want the fourth refused", statuses)
		}
	})
	t.Run("a failing store lets requests through", func(t *testing.T) {
		h := newHarness(t, harnessOpts{cfg: Config{RateLimits: RateLimits{RequestsPerMinute: 1, Store: failingStore{}}}})
		for range 3 {
			if resp, body := h.post(t, "/chat/completions", ask); resp.StatusCode != 200 {
				t.Fatalf("%d %s", resp.StatusCode, body)
			}
		}
	})
}

// TestRateLimitByAddressWithoutAuth checks that without client auth a client cannot get a fresh bucket by sending
// a made-up bearer token each time: every request from one address counts against that address.
func TestRateLimitByAddressWithoutAuth(t *testing.T) {
	const ask = `{"messages":[{"role":"user","content":"one two three"}]}`
	h := newHarness(t, harnessOpts{cfg: Config{RateLimits: RateLimits{RequestsPerMinute: 2}}})
	for i, token := range []string{"made-up-1", "made-up-2", "made-up-3"} {
		resp, body := h.post(t, "/chat/completions", ask, "Authorization", "Bearer "+token)
		if want := []int{200, 200, http.StatusTooManyRequests}[i]; resp.StatusCode != want {
			t.Fatalf("request %d with token %s: %d %s, want %d", i, token, resp.StatusCode, body, want)
		}
	}
}

// routing is a Grounder that grounds nothing and serves one route, as /v1/retrieve is served.
type routing struct{}

func (routing) Ground(context.Context, *GroundRequest) (*Grounding, error) { return nil, nil }

func (routing) Routes() []Route {
	return []Route{{Method: http.MethodPost, Path: "/retrieve", Handle: func(context.Context, *Request) (any, error) {
		return map[string]string{"object": "retrieval"}, nil
	}}}
}

// TestRateLimitCountsRoutes checks that a Grounder's routes are admitted like chat requests, from the same
// bucket: /v1/retrieve costs a query analysis, a model call when online.
func TestRateLimitCountsRoutes(t *testing.T) {
	keys := []string{"sk-alice-0000"}
	h := newHarness(t, harnessOpts{cfg: Config{APIKeys: keys, Grounder: routing{}, RateLimits: RateLimits{RequestsPerMinute: 3}}})
	auth := []string{"Authorization", "Bearer " + keys[0]}
	for i := range 2 {
		if resp, body := h.post(t, "/retrieve", `{"query":"fees"}`, auth...); resp.StatusCode != 200 || resp.Header.Get("X-Ratelimit-Limit-Requests") != "3" {
			t.Fatalf("retrieve %d: %d %v %s", i, resp.StatusCode, resp.Header, body)
		}
	}
	if resp, body := h.post(t, "/chat/completions", `{"messages":[{"role":"user","content":"x"}]}`, auth...); resp.StatusCode != 200 {
		t.Fatalf("chat: %d %s", resp.StatusCode, body)
	}
	resp, body := h.post(t, "/retrieve", `{"query":"fees"}`, auth...)
	if resp.StatusCode != http.StatusTooManyRequests || !strings.Contains(body, `"code":"rate_limit_exceeded"`) || resp.Header.Get("Retry-After") == "" {
		t.Errorf("retrieve past the limit: %d %v %s", resp.StatusCode, resp.Header, body)
	}
}

// TestMaskKey checks that a masked key shows at most four characters, and never more than a third of the key.
func TestMaskKey(t *testing.T) {
	for _, k := range []string{"", "a", "abcde", "abcdef", "sk-abcdefg", "sk-proj-0123456789abcdefghijklmnop"} {
		m := maskKey(k)
		shown := len(strings.TrimLeft(m, "*"))
		if shown > 4 || 3*shown > len(k) || !strings.HasSuffix(k, strings.TrimLeft(m, "*")) || strings.Contains(m, k) && k != "" {
			t.Errorf("maskKey(%q) = %q: shows %d characters", k, m, shown)
		}
	}
	if got := maskKey("sk-proj-0123456789abcdefghijklmnop"); got != "****mnop" {
		t.Errorf("a long key masks as %q, want ****mnop", got)
	}
}
