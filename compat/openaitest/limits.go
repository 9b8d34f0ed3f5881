package openaitest

import (
	"fmt"
	"math"
	"net/http"
	"strings"
	"time"
)

// Limits are the per-key limits of OpenAI's rate-limit guide and billing:
// a budget of tokens and per-minute rates of requests and tokens. The zero
// value imposes none. While RPM or TPM is set, every chat and embeddings
// response (200 or error) carries that limit's x-ratelimit-limit-*,
// x-ratelimit-remaining-* and x-ratelimit-reset-* headers, as OpenAI's do.
type Limits struct {
	// Quota is the key's budget of billed tokens (chat prompt and completion
	// tokens, embeddings input tokens). Once the key has been billed at least
	// this many, every request gets 429 insufficient_quota, however long the
	// caller waits; the request that crosses the budget is still served, as a
	// prepaid balance goes just below zero. 0 is no budget.
	Quota int
	// RPM is the requests-per-minute limit; 0 is none.
	RPM int
	// TPM is the tokens-per-minute limit; 0 is none. A chat request counts
	// its prompt tokens plus its max_completion_tokens (or max_tokens) when
	// set, an embeddings request its input tokens, as OpenAI counts a request
	// against the limit before it runs.
	TPM int
	// RetryAfter sends Retry-After (whole seconds, rounded up) with each
	// rate-limit 429. Default off: only the x-ratelimit-* headers say when to
	// retry.
	RetryAfter bool
}

// bucket is one per-minute limit of one key. OpenAI's limits refill
// continuously rather than at the top of each minute ("reset" is the time
// until the limit is back to its initial state), so the bucket holds the
// capacity left and refills at limit per minute.
type bucket struct {
	left float64
	at   time.Time
	set  bool
}

func (b *bucket) refill(now time.Time, limit int) {
	if !b.set {
		b.left, b.at, b.set = float64(limit), now, true
		return
	}
	if el := now.Sub(b.at); el > 0 {
		b.left = math.Min(float64(limit), b.left+float64(limit)*el.Seconds()/60)
	}
	b.at = now
}

// wait is how long until the bucket holds n.
func (b *bucket) wait(n float64, limit int) time.Duration {
	if b.left >= n {
		return 0
	}
	return time.Duration((n - b.left) / float64(limit) * float64(time.Minute))
}

// keyState is what the stand-in keeps per key.
type keyState struct {
	billed   int
	requests bucket
	tokens   bucket
}

// SetLimits replaces the limits of key, or with key "" those of every key
// that has none of its own. What the key was billed so far stays: raising
// Quota tops up a spent key.
func (s *Server) SetLimits(key string, l Limits) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if key == "" {
		s.cfg.Limits = l
		return
	}
	if s.keyLimits == nil {
		s.keyLimits = map[string]Limits{}
	}
	s.keyLimits[key] = l
}

func (s *Server) limitsLocked(key string) Limits {
	if l, ok := s.keyLimits[key]; ok {
		return l
	}
	return s.cfg.Limits
}

func (s *Server) stateLocked(key string) *keyState {
	st := s.keys[key]
	if st == nil {
		st = &keyState{}
		s.keys[key] = st
	}
	return st
}

// bearer is the key a request carries.
func bearer(r *http.Request) string {
	return strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
}

// admit applies the key's quota and rate limits to a request that would use
// tokens, setting the x-ratelimit-* headers either way, and takes the
// request from the limits when it passes. It returns the refusal, or nil.
func (s *Server) admit(w http.ResponseWriter, r *http.Request, model string, tokens int) *apiError {
	key := bearer(r)
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.limitsLocked(key)
	st := s.stateLocked(key)
	now := s.cfg.Now()
	if l.RPM > 0 {
		st.requests.refill(now, l.RPM)
	}
	if l.TPM > 0 {
		st.tokens.refill(now, l.TPM)
	}
	var refusal *apiError
	switch {
	case l.Quota > 0 && st.billed >= l.Quota:
		refusal = errQuota()
	case l.TPM > 0 && tokens > l.TPM:
		refusal = errTooLarge(model, l.TPM, tokens)
	case l.RPM > 0 && st.requests.left < 1:
		wait := st.requests.wait(1, l.RPM)
		refusal = errRateLimit(model, "requests", l.RPM, l.RPM-int(st.requests.left), 1, wait)
		if l.RetryAfter {
			refusal.retryAfter = wait
		}
	case l.TPM > 0 && st.tokens.left < float64(tokens):
		wait := st.tokens.wait(float64(tokens), l.TPM)
		refusal = errRateLimit(model, "tokens", l.TPM, l.TPM-int(st.tokens.left), tokens, wait)
		if l.RetryAfter {
			refusal.retryAfter = wait
		}
	default:
		if l.RPM > 0 {
			st.requests.left--
		}
		if l.TPM > 0 {
			st.tokens.left -= float64(tokens)
		}
	}
	h := w.Header()
	// OpenAI's headers (rate-limit guide, "Rate limits in headers"): each
	// limit, what is left of it, and the time until it is whole again.
	if l.RPM > 0 {
		h.Set("x-ratelimit-limit-requests", fmt.Sprint(l.RPM))
		h.Set("x-ratelimit-remaining-requests", fmt.Sprint(max(0, int(st.requests.left))))
		h.Set("x-ratelimit-reset-requests", formatReset(st.requests.wait(float64(l.RPM), l.RPM)))
	}
	if l.TPM > 0 {
		h.Set("x-ratelimit-limit-tokens", fmt.Sprint(l.TPM))
		h.Set("x-ratelimit-remaining-tokens", fmt.Sprint(max(0, int(st.tokens.left))))
		h.Set("x-ratelimit-reset-tokens", formatReset(st.tokens.wait(float64(l.TPM), l.TPM)))
	}
	return refusal
}

// bill records tokens used by a served request.
func (s *Server) bill(key, endpoint, model string, tokens int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stateLocked(key).billed += tokens
	s.billed[Billed{Endpoint: endpoint, Model: model}] += tokens
	s.served[endpoint]++
}

// Billed names what tokens were billed for: an endpoint ("chat/completions",
// "embeddings") and a model.
type Billed struct {
	Endpoint string
	Model    string
}

// Stats is what the stand-in counted: what it served and billed, and what
// it refused by its rules (injected Faults are not counted).
type Stats struct {
	// Tokens are the tokens billed per endpoint and model: a completion's
	// usage.total_tokens, an embeddings request's usage.prompt_tokens.
	Tokens map[Billed]int
	// Served is the number of requests answered 200, per endpoint.
	Served map[string]int
	// Refused is the number of requests refused, per error code (its type
	// when OpenAI sends no code): "insufficient_quota",
	// "rate_limit_exceeded", "max_tokens_per_request", "unsupported_value",
	// "invalid_api_key", ...
	Refused map[string]int
}

// TotalTokens is the sum of Tokens.
func (st Stats) TotalTokens() int {
	n := 0
	for _, v := range st.Tokens {
		n += v
	}
	return n
}

// Stats returns a snapshot of the counters.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := Stats{Tokens: map[Billed]int{}, Served: map[string]int{}, Refused: map[string]int{}}
	for k, v := range s.billed {
		st.Tokens[k] = v
	}
	for k, v := range s.served {
		st.Served[k] = v
	}
	for k, v := range s.refused {
		st.Refused[k] = v
	}
	return st
}
