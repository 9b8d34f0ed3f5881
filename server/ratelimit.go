package server

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/ragproxy/ragproxy/compat"
	"github.com/ragproxy/ragproxy/ratelimit"
)

// RateLimits bound what one client may ask of the proxy per minute, counted per client key (per client address
// when client auth is off). Chat completions and the Grounder's routes (/v1/retrieve) count alike. The zero value
// sets no limit.
type RateLimits struct {
	// RequestsPerMinute bounds chat requests and requests to the Grounder's routes; 0 means no limit.
	RequestsPerMinute int
	// TokensPerMinute bounds tokens, counted as OpenAI does: the prompt (estimated from the body at arrival)
	// and the answer (from its usage, once known); 0 means no limit.
	TokensPerMinute int
	// Store keeps the buckets; default an in-process ratelimit.Memory. Use a ratelimit.Redis so replicas share
	// them. A store that fails lets requests through.
	Store ratelimit.Store
}

func (l RateLimits) enabled() bool { return l.RequestsPerMinute > 0 || l.TokensPerMinute > 0 }

// clientKey names the client a request counts against: with client auth, a hash of its key (never the key
// itself), which auth has checked; a visitor with a publishable key, its address (see widgetAuth); without client
// auth, its address. A bearer token the server did not issue names nobody: counting by it would give each made-up
// token a bucket of its own.
func (s *Server) clientKey(c *fiber.Ctx) string {
	if visitor, ok := c.Locals(localWidget).(string); ok {
		return visitor
	}
	if token, ok := bearer(c); ok && len(s.cfg.APIKeys) > 0 {
		sum := sha256.Sum256([]byte(token))
		return "key:" + hex.EncodeToString(sum[:12])
	}
	return "ip:" + c.IP()
}

// estimateTokens is a request's prompt as the limits count it before it is tokenised: four bytes a token.
func estimateTokens(body []byte) float64 { return math.Ceil(float64(len(body)) / 4) }

// admit takes the request and its estimated prompt from the client's buckets and sets OpenAI's x-ratelimit-*
// headers; a request over a limit gets a 429 rate_limit_exceeded error with Retry-After.
func (s *Server) admit(ctx context.Context, c *fiber.Ctx, key string) error {
	l := s.cfg.RateLimits
	type bucket struct {
		name  string // OpenAI's header and error wording
		unit  string
		limit int
		n     float64
	}
	for _, b := range []bucket{{"requests", "RPM", l.RequestsPerMinute, 1}, {"tokens", "TPM", l.TokensPerMinute, estimateTokens(c.Body())}} {
		if b.limit <= 0 {
			continue
		}
		res, err := s.limits.Take(ctx, b.name+":"+key, b.n, ratelimit.PerMinute(b.limit), false)
		if err != nil {
			s.limitErrors.note(s.log, "rate-limit store failing; requests go through unlimited", err)
			continue
		}
		c.Set("X-Ratelimit-Limit-"+b.name, strconv.Itoa(b.limit))
		c.Set("X-Ratelimit-Remaining-"+b.name, strconv.Itoa(max(int(res.Remaining), 0)))
		c.Set("X-Ratelimit-Reset-"+b.name, res.Reset.Round(time.Millisecond).String())
		if !res.Allowed {
			wait := res.RetryAfter
			if b.n > float64(b.limit) {
				wait = time.Minute // more than a minute's worth: asking again later will not help sooner
			}
			return &compat.APIError{Status: fiber.StatusTooManyRequests, Type: b.name, Code: "rate_limit_exceeded",
				RetryAfter: strconv.Itoa(int(math.Ceil(wait.Seconds()))),
				Message: fmt.Sprintf("Rate limit reached on %s per min (%s): Limit %d, Requested %d. Please try again in %s.",
					b.name, b.unit, b.limit, int(b.n), wait.Round(time.Millisecond))}
		}
	}
	return nil
}

// charge counts an answer's tokens against its client once its usage is known; the bucket may go into debt.
func (s *Server) charge(ctx context.Context, key string, completionTokens int) {
	l := s.cfg.RateLimits
	if l.TokensPerMinute <= 0 || completionTokens <= 0 || key == "" {
		return
	}
	if _, err := s.limits.Take(ctx, "tokens:"+key, float64(completionTokens), ratelimit.PerMinute(l.TokensPerMinute), true); err != nil {
		s.limitErrors.note(s.log, "rate-limit store failing; requests go through unlimited", err)
	}
}
