package upstream_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ragproxy/ragproxy/compat"
	"github.com/ragproxy/ragproxy/compat/openaitest"
	"github.com/ragproxy/ragproxy/llm"
	"github.com/ragproxy/ragproxy/upstream"
)

// fakeClock is a clock that Sleep moves forward, shared by the stand-in and the pacer, so that waits take no
// real time.
type fakeClock struct {
	mu     sync.Mutex
	t      time.Time
	sleeps []time.Duration
}

func newClock() *fakeClock { return &fakeClock{t: time.Unix(1_700_000_000, 0)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.sleeps = append(c.sleeps, d)
	c.mu.Unlock()
	return ctx.Err()
}

func pacedClient(t *testing.T, srv *openaitest.Server, p *upstream.Pacer, model string) *upstream.Client {
	t.Helper()
	c, err := upstream.New(upstream.Config{Retries: -1,
		Primary: upstream.Endpoint{BaseURL: srv.URL(), APIKey: "k", Model: model, Pacer: p}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestPacerWaitsOutARateLimitWithOnlyHeaders(t *testing.T) {
	clock := newClock()
	// Room for about two requests a minute; no Retry-After, as OpenAI sends none for most rate limits.
	srv := openaitest.NewServer(openaitest.Config{Now: clock.Now, Limits: openaitest.Limits{TPM: 1200}})
	defer srv.Close()
	p := upstream.NewPacer(upstream.PacerConfig{Now: clock.Now, Sleep: clock.Sleep})
	ask := upstream.Asker{Client: pacedClient(t, srv, p, "gpt-4o-mini")}.Ask
	start := clock.Now()
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = ask(context.Background(), llm.Prompt{System: "Summarise.", User: strings.Repeat("word ", 400)})
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("request %d: %v", i, err)
		}
	}
	st := srv.Stats()
	t.Logf("8 requests, %d tokens billed, refusals %v, %s on the stand-in's clock", st.TotalTokens(), st.Refused, clock.Now().Sub(start))
	if st.Served["chat/completions"] != 8 {
		t.Errorf("%d served, want 8", st.Served["chat/completions"])
	}
	// Eight prompts of about 400 tokens (3,200 against the limit; the echoed completions are billed, not
	// counted against it) at 1200 a minute, with 1200 there at the start, take 1m40s: the pacer waited them out.
	if el := clock.Now().Sub(start); el < 90*time.Second {
		t.Errorf("the requests took %s on the stand-in's clock, want over 1m30s at 1200 TPM", el)
	}
}

func TestSpentQuotaStopsTheKeyAtOnce(t *testing.T) {
	clock := newClock()
	srv := openaitest.NewServer(openaitest.Config{Now: clock.Now, Limits: openaitest.Limits{Quota: 10}})
	defer srv.Close()
	p := upstream.NewPacer(upstream.PacerConfig{Now: clock.Now, Sleep: clock.Sleep})
	ask := upstream.Asker{Client: pacedClient(t, srv, p, "gpt-4o-mini")}.Ask
	ctx := context.Background()
	if _, err := ask(ctx, llm.Prompt{System: "s", User: "the request that crosses the budget is served"}); err != nil {
		t.Fatal(err)
	}
	_, err := ask(ctx, llm.Prompt{System: "s", User: "now the quota is spent"})
	var ae *compat.APIError
	if !errors.As(err, &ae) || ae.Code != "insufficient_quota" || !upstream.Fatal(err) || upstream.Retryable(err) ||
		!strings.Contains(err.Error(), "insufficient_quota") || !strings.Contains(err.Error(), "exceeded your current quota") {
		t.Fatalf("error = %v, want insufficient_quota, fatal, with OpenAI's code and message", err)
	}
	// The next request is not sent: the pacer stopped with the key.
	_, err = ask(ctx, llm.Prompt{System: "s", User: "and stays spent"})
	if !upstream.Fatal(err) || p.Stopped() == nil {
		t.Fatalf("error = %v, want the stopped key's refusal", err)
	}
	if n := len(srv.Requests()); n != 2 {
		t.Errorf("%d requests reached the stand-in, want 2 (no retry of a spent quota, nothing after it)", n)
	}
}

func TestReasoningModelGetsNoTemperature(t *testing.T) {
	srv := openaitest.NewServer(openaitest.Config{Models: []string{"gpt-4o-mini", "gpt-5-mini", "o4-mini"}})
	defer srv.Close()
	for _, model := range []string{"gpt-5-mini", "o4-mini", "gpt-4o-mini"} {
		t.Run(model, func(t *testing.T) {
			c := pacedClient(t, srv, nil, model)
			_, err := upstream.Asker{Client: c}.Ask(context.Background(),
				llm.Prompt{System: "s", User: "u", MaxTokens: 50, Temperature: 0})
			if err != nil {
				t.Fatalf("Ask: %v", err)
			}
			reqs := srv.Requests()
			var body map[string]json.RawMessage
			if err := json.Unmarshal(reqs[len(reqs)-1].Body, &body); err != nil {
				t.Fatal(err)
			}
			_, temp := body["temperature"]
			_, maxTokens := body["max_tokens"]
			mct := string(body["max_completion_tokens"])
			reasoning := upstream.IsReasoningModel(model)
			if reasoning && (temp || maxTokens || mct != "50") || !reasoning && (!temp || !maxTokens || mct != "") {
				t.Errorf("body %s", reqs[len(reqs)-1].Body)
			}
		})
	}
}

func TestPacerReadsTheHeaders(t *testing.T) {
	tests := []struct {
		name   string
		header map[string]string
		tokens int
		want   time.Duration
	}{
		{"room left", map[string]string{"x-ratelimit-limit-tokens": "1000", "x-ratelimit-remaining-tokens": "900", "x-ratelimit-reset-tokens": "6s"}, 500, 0},
		// 1000 a minute refill at 1000/60 a second: 500 more, and the margin of 0.5% of the limit, take 30.3 s.
		{"tokens out", map[string]string{"x-ratelimit-limit-tokens": "1000", "x-ratelimit-remaining-tokens": "0", "x-ratelimit-reset-tokens": "1m0s"}, 500, 30300 * time.Millisecond},
		{"requests out", map[string]string{"x-ratelimit-limit-requests": "60", "x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "1m0s"}, 1, time.Second},
		{"no limit sent, wait for the reset", map[string]string{"x-ratelimit-remaining-tokens": "0", "x-ratelimit-reset-tokens": "250ms"}, 10, 250 * time.Millisecond},
		{"larger than the whole limit: no wait helps", map[string]string{"x-ratelimit-limit-tokens": "100", "x-ratelimit-remaining-tokens": "0", "x-ratelimit-reset-tokens": "1m0s"}, 500, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := newClock()
			p := upstream.NewPacer(upstream.PacerConfig{Now: clock.Now, Sleep: clock.Sleep})
			h := http.Header{}
			for k, v := range tt.header {
				h.Set(k, v)
			}
			p.Observe(h)
			if _, err := p.Wait(context.Background(), tt.tokens); err != nil {
				t.Fatal(err)
			}
			var got time.Duration
			for _, d := range clock.sleeps {
				got += d
			}
			if d := got - tt.want; d < -time.Millisecond || d > time.Millisecond {
				t.Errorf("waited %s, want %s", got, tt.want)
			}
		})
	}
}

func TestPacerWaitsWhatTheRefusalSays(t *testing.T) {
	tests := []struct {
		name string
		err  *compat.APIError
		want time.Duration
	}{
		{"Retry-After", &compat.APIError{Status: 429, Type: "tokens", Code: "rate_limit_exceeded", RetryAfter: "7"}, 7 * time.Second},
		{"try again in", &compat.APIError{Status: 429, Type: "tokens", Code: "rate_limit_exceeded",
			Message: "Rate limit reached for gpt-4o-mini in organization org-x on tokens per min (TPM): Limit 200000, Used 199500, Requested 1500. Please try again in 1.5s. Visit https://platform.openai.com/account/rate-limits to learn more."}, 1500 * time.Millisecond},
		{"neither", &compat.APIError{Status: 429, Type: "requests", Code: "rate_limit_exceeded"}, time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := newClock()
			p := upstream.NewPacer(upstream.PacerConfig{Now: clock.Now, Sleep: clock.Sleep})
			if !p.Refused(tt.err) {
				t.Fatal("a rate limit is not to be waited out")
			}
			start := clock.Now()
			if _, err := p.Wait(context.Background(), 1); err != nil {
				t.Fatal(err)
			}
			if got := clock.Now().Sub(start); got != tt.want {
				t.Errorf("waited %s, want %s", got, tt.want)
			}
		})
	}
	for _, status := range []int{401, 403} {
		p := upstream.NewPacer(upstream.PacerConfig{})
		err := &compat.APIError{Status: status, Type: "invalid_request_error", Message: fmt.Sprint("refused ", status)}
		retry := p.Refused(err)
		if _, werr := p.Wait(context.Background(), 1); retry || werr == nil {
			t.Errorf("a %d did not stop the pacer", status)
		}
	}
}
