// Package ratelimit keeps token buckets per client: how many requests and tokens a key may spend per minute.
// A bucket holds up to its burst and refills at its rate; a take that finds too few tokens is refused with the
// time until there are enough. Buckets live in process (Memory) or in Redis (Redis), where every replica of the
// proxy shares them. Stores are safe for concurrent use.
package ratelimit

import (
	"context"
	"math"
	"sync"
	"time"
)

// Limit is a bucket's shape: it holds at most Burst tokens and gains Rate tokens a second.
type Limit struct {
	Rate, Burst float64
}

// PerMinute is the limit of n a minute, all of which may be spent at once.
func PerMinute(n int) Limit { return Limit{Rate: float64(n) / 60, Burst: float64(n)} }

// Result is the state of a bucket after a take.
type Result struct {
	// Allowed reports that the tokens were taken.
	Allowed bool
	// Remaining is what the bucket holds now (negative after a forced take).
	Remaining float64
	// RetryAfter, when refused, is the wait until the bucket holds what was asked.
	RetryAfter time.Duration
	// Reset is the wait until the bucket is full again.
	Reset time.Duration
}

// Store keeps buckets by key.
type Store interface {
	// Take removes n tokens from the bucket key if it holds them; with force it removes them anyway, leaving
	// the bucket in debt (for what was spent before it could be counted, such as an answer's tokens).
	Take(ctx context.Context, key string, n float64, l Limit, force bool) (Result, error)
}

// result works out a Result from a bucket's tokens after a take.
func result(allowed bool, tokens, n float64, l Limit) Result {
	r := Result{Allowed: allowed, Remaining: tokens}
	if l.Rate > 0 {
		r.Reset = seconds((l.Burst - tokens) / l.Rate)
		if !allowed {
			r.RetryAfter = seconds((n - tokens) / l.Rate)
		}
	}
	return r
}

func seconds(s float64) time.Duration {
	if s <= 0 {
		return 0
	}
	return time.Duration(math.Ceil(s * float64(time.Second)))
}

// Memory keeps buckets in process. Buckets that refilled completely are dropped when the store grows past
// MaxBuckets, so that clients who come once cost nothing for long. The zero value works.
type Memory struct {
	// MaxBuckets bounds the store before full buckets are swept; default 100000.
	MaxBuckets int

	mu      sync.Mutex
	buckets map[string]*bucket
	now     func() time.Time // for tests; default time.Now
}

type bucket struct {
	tokens float64
	at     time.Time
	limit  Limit
}

var _ Store = (*Memory)(nil)

// Take implements Store.
func (m *Memory) Take(_ context.Context, key string, n float64, l Limit, force bool) (Result, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := time.Now()
	if m.now != nil {
		now = m.now()
	}
	if m.buckets == nil {
		m.buckets = map[string]*bucket{}
	}
	b, ok := m.buckets[key]
	if !ok {
		m.sweep(now)
		b = &bucket{tokens: l.Burst, at: now}
		m.buckets[key] = b
	}
	b.limit = l
	b.tokens = min(l.Burst, b.tokens+now.Sub(b.at).Seconds()*l.Rate)
	b.at = now
	allowed := b.tokens >= n
	if allowed || force {
		b.tokens -= n
	}
	return result(allowed, b.tokens, n, l), nil
}

// sweep drops the buckets that are full again, once the store holds MaxBuckets of them.
func (m *Memory) sweep(now time.Time) {
	limit := m.MaxBuckets
	if limit <= 0 {
		limit = 100000
	}
	if len(m.buckets) < limit {
		return
	}
	for k, b := range m.buckets {
		if b.tokens+now.Sub(b.at).Seconds()*b.limit.Rate >= b.limit.Burst {
			delete(m.buckets, k)
		}
	}
}
