package upstream

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ragproxy/ragproxy/compat"
)

// PacerConfig configures a Pacer. The zero value works.
type PacerConfig struct {
	// Now is the clock; default time.Now. Tests pass the stand-in's clock.
	Now func() time.Time
	// Sleep waits d or until ctx ends; default a timer. Tests pass one that advances their clock, so that no
	// test waits in real time.
	Sleep func(ctx context.Context, d time.Duration) error
	// MaxWait is the longest single wait the pacer accepts: an upstream that asks for longer (a daily limit)
	// fails the request instead. Default 10m.
	MaxWait time.Duration
	// MaxRateWaits is how many rate-limit refusals in a row one request waits out before it fails. Default 20.
	MaxRateWaits int
}

// Pacer paces the requests sent with one upstream key by what the upstream says of that key's limits, for
// batch work (an ingest's summaries and embeddings) that should wait rather than fail. OpenAI's rate-limit guide
// ("Rate limits in headers") sends with every response the limit, the remaining requests and tokens, and the
// time until each is whole again (x-ratelimit-limit-*, x-ratelimit-remaining-*, x-ratelimit-reset-*); a 429 may
// carry Retry-After and says "Please try again in 1.5s" in its message. The pacer keeps the last of these
// readings, takes each request's tokens from them as it goes out, and holds back a request the limits cannot
// hold until they refill (they refill continuously, so the wait is the share of the reset the request needs).
// After a 429 it holds every request of the key for the time the upstream asked.
//
// A refusal that no wait clears (insufficient_quota, 401, 403) stops the pacer: every later Wait returns that
// error at once, so that the summaries and the embeddings sharing the key stop together.
//
// One Pacer belongs to one key, shared by everything that sends with it. It is safe for concurrent use; a nil
// *Pacer paces nothing.
type Pacer struct {
	cfg PacerConfig

	mu               sync.Mutex
	requests, tokens limitState
	until            time.Time // nothing is sent before this (a 429 asked to wait)
	stopped          error
	waited           time.Duration
}

// limitState is the last reading of one limit, less what was sent since.
type limitState struct {
	known bool
	limit int
	left  float64
	at    time.Time
	// rate is the refill in units per second, from the reset header: (limit-left)/reset.
	rate float64
	// full is when the limit is whole again, when the limit itself was not sent.
	full time.Time
}

// NewPacer returns a pacer for one key.
func NewPacer(cfg PacerConfig) *Pacer {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Sleep == nil {
		cfg.Sleep = sleep
	}
	if cfg.MaxWait <= 0 {
		cfg.MaxWait = 10 * time.Minute
	}
	if cfg.MaxRateWaits <= 0 {
		cfg.MaxRateWaits = 20
	}
	return &Pacer{cfg: cfg}
}

// ErrWaitTooLong fails a request whose wait would exceed PacerConfig.MaxWait.
var ErrWaitTooLong = errors.New("the upstream asks to wait longer than the pacer's limit")

// Wait blocks until a request of about tokens tokens may be sent by what is known of the key's limits, then
// takes it from them. It returns the error that stopped the pacer, if one did, and ctx's error when ctx ends.
// The Ticket it returns reads the request's answer (see Ticket.Done).
func (p *Pacer) Wait(ctx context.Context, tokens int) (*Ticket, error) {
	if p == nil {
		return nil, nil
	}
	for {
		p.mu.Lock()
		if p.stopped != nil {
			err := p.stopped
			p.mu.Unlock()
			return nil, fmt.Errorf("upstream key stopped earlier: %w", err)
		}
		now := p.cfg.Now()
		d := max(p.until.Sub(now), p.requests.wait(now, 1, false), p.tokens.wait(now, float64(tokens), true))
		if d <= 0 {
			t := &Ticket{p: p, tokens: tokens}
			t.requests = p.requests.take(now, 1)
			t.took = p.tokens.take(now, float64(tokens))
			p.mu.Unlock()
			return t, nil
		}
		if d > p.cfg.MaxWait {
			p.mu.Unlock()
			return nil, fmt.Errorf("upstream: wait %s: %w", d.Round(time.Millisecond), ErrWaitTooLong)
		}
		p.waited += d
		p.mu.Unlock()
		if err := p.cfg.Sleep(ctx, d); err != nil {
			return nil, err
		}
	}
}

// Ticket is one request let through by Wait.
type Ticket struct {
	p              *Pacer
	tokens         int
	took, requests bool // what Wait took from the known limits
}

// Done reads the answer to the ticket's request: its headers (as Observe does) and, when err is a refusal the
// upstream answered before counting the request (a 429, a 400), gives back first what Wait took for it, which
// the limits never held. A nil *Ticket does nothing.
func (t *Ticket) Done(h http.Header, err error) {
	if t == nil {
		return
	}
	if err != nil && refusedUncounted(err) {
		p := t.p
		p.mu.Lock()
		now := p.cfg.Now()
		if t.requests {
			p.requests.give(now, 1)
		}
		if t.took {
			p.tokens.give(now, float64(t.tokens))
		}
		t.took, t.requests = false, false
		p.mu.Unlock()
	}
	t.p.Observe(h)
}

// Observe reads the x-ratelimit-* headers of a response (a success or a refusal).
func (p *Pacer) Observe(h http.Header) {
	if p == nil || h == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.cfg.Now()
	p.requests.observe(now, h, "requests")
	p.tokens.observe(now, h, "tokens")
}

// Refused records a failed request's error and reports whether the request should be sent again once Wait
// lets it: a rate-limit 429, after which every request of the key waits the time the upstream asked. A refusal
// no wait clears (see Fatal) stops the pacer.
func (p *Pacer) Refused(err error) bool {
	if p == nil {
		return false
	}
	if Fatal(err) {
		p.mu.Lock()
		if p.stopped == nil {
			p.stopped = err
		}
		p.mu.Unlock()
		return false
	}
	var ae *compat.APIError
	if !errors.As(err, &ae) || ae.Status != http.StatusTooManyRequests {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.cfg.Now()
	wait, ok := retryAfterHeader(ae.RetryAfter, now)
	if !ok {
		wait, ok = tryAgainIn(ae.Message)
	}
	if !ok {
		// Neither says: the limit that ran out is whole again after its reset.
		wait = time.Second
		for _, l := range []*limitState{&p.requests, &p.tokens} {
			if l.known && l.left < 1 {
				wait = max(wait, l.wait(now, 1, false))
			}
		}
	}
	p.until = maxTime(p.until, now.Add(wait))
	return true
}

// Stopped returns the refusal that stopped the pacer, or nil.
func (p *Pacer) Stopped() error {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stopped
}

// TokenLimit returns the key's tokens-per-minute limit as the upstream last stated it; 0 while unknown.
func (p *Pacer) TokenLimit() int {
	if p == nil {
		return 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.tokens.limit
}

// Waited returns the time requests were held back in all, for reports.
func (p *Pacer) Waited() time.Duration {
	if p == nil {
		return 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.waited
}

// maxRateWaits is MaxRateWaits for p.
func (p *Pacer) maxRateWaits() int {
	if p == nil {
		return 0
	}
	return p.cfg.MaxRateWaits
}

// Fatal reports whether err is a refusal that no retry and no wait clears: insufficient_quota (a 429 that says the
// key's credit is spent, OpenAI's error codes guide), 401 (a wrong key) and 403 (a region or a model the key may
// not use).
func Fatal(err error) bool {
	var ae *compat.APIError
	if !errors.As(err, &ae) {
		return false
	}
	return ae.Status == http.StatusUnauthorized || ae.Status == http.StatusForbidden ||
		ae.Code == "insufficient_quota" || ae.Type == "insufficient_quota"
}

// observe reads one limit's headers and reports whether they were there.
func (l *limitState) observe(now time.Time, h http.Header, kind string) bool {
	rem, err := strconv.ParseFloat(strings.TrimSpace(h.Get("x-ratelimit-remaining-"+kind)), 64)
	if err != nil {
		return false
	}
	limit, _ := strconv.Atoi(strings.TrimSpace(h.Get("x-ratelimit-limit-" + kind)))
	reset, _ := time.ParseDuration(strings.TrimSpace(h.Get("x-ratelimit-reset-" + kind)))
	if l.known && l.rate > 0 && limit == l.limit {
		// Answers arrive out of the order they were admitted in: a slow request's reading predates what was
		// sent since, which the estimate holds. The lower of the two is the safer (refused requests were given
		// back first, see Ticket.Done).
		rem = min(rem, l.available(now))
	}
	*l = limitState{known: true, limit: limit, left: rem, at: now}
	switch {
	case limit > 0 && reset > 0 && rem < float64(limit):
		l.rate = (float64(limit) - rem) / reset.Seconds()
	case limit > 0:
		// Whole, or no reset sent: the limits are per minute (OpenAI's RPM and TPM) and refill as such.
		l.rate = float64(limit) / 60
	default:
		// No limit sent: what is left is all there is until the reset.
		l.full = now.Add(reset)
	}
	return true
}

// available is what the limit holds at now.
func (l *limitState) available(now time.Time) float64 {
	if l.rate > 0 {
		return min(float64(l.limit), l.left+l.rate*now.Sub(l.at).Seconds())
	}
	if !now.Before(l.full) {
		return max(l.left, float64(l.limit), 1e18)
	}
	return l.left
}

// wait is how long until the limit holds n (and a margin, when asked); 0 when it is not known, or when n exceeds the whole limit (no wait
// helps: the upstream's refusal says so).
func (l *limitState) wait(now time.Time, n float64, margin bool) time.Duration {
	if !l.known || l.limit > 0 && n > float64(l.limit) {
		return 0
	}
	// A margin of 0.5% of the limit: the headers round (remaining down to a whole token, the reset up to a
	// millisecond), so the estimate may run a few tokens ahead of the upstream's count.
	if l.limit > 0 && margin {
		n = min(n+float64(l.limit)/200, float64(l.limit))
	}
	have := l.available(now)
	if have >= n {
		return 0
	}
	if l.rate > 0 {
		return time.Duration((n - have) / l.rate * float64(time.Second))
	}
	return l.full.Sub(now)
}

// take counts n sent at now and reports whether the limit is known (so that n was taken from it).
func (l *limitState) take(now time.Time, n float64) bool {
	if !l.known {
		return false
	}
	l.left = l.available(now) - n
	l.at = now
	if l.rate == 0 && !now.Before(l.full) {
		l.known = false // whole again: the next response says how much is left
	}
	return true
}

// give returns n taken at an earlier time.
func (l *limitState) give(now time.Time, n float64) {
	if !l.known {
		return
	}
	l.left = l.available(now) + n
	if l.limit > 0 {
		l.left = min(l.left, float64(l.limit))
	}
	l.at = now
}

// retryAfterHeader reads Retry-After (seconds or an HTTP date).
func retryAfterHeader(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseFloat(v, 64); err == nil && secs >= 0 {
		return time.Duration(secs * float64(time.Second)), true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}

// tryAgainRE finds the wait in OpenAI's rate-limit message ("... Please try again in 1.5s. ...", "in 6m0s",
// "in 20ms").
var tryAgainRE = regexp.MustCompile(`try again in ([0-9.]+(?:ms|s|m|h)(?:[0-9.]+(?:ms|s))*)`)

func tryAgainIn(msg string) (time.Duration, bool) {
	m := tryAgainRE.FindStringSubmatch(msg)
	if m == nil {
		return 0, false
	}
	d, err := time.ParseDuration(m[1])
	return d, err == nil && d >= 0
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
