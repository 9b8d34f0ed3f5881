// Package cache provides the byte caches ragproxy keeps its responses, embeddings and query analyses in: an
// in-process LRU (the default) and Redis (when the deployment scales out), a wrapper that turns cache failures
// into misses, a single-flight Group so concurrent identical misses compute once, and Key, which derives a
// stable key from canonical JSON.
//
// Every type in this package is safe for concurrent use.
package cache

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"
)

// Cache stores byte values under string keys.
type Cache interface {
	// Get returns the value stored under key; ok is false on a miss.
	Get(ctx context.Context, key string) (val []byte, ok bool, err error)
	// Set stores val under key for ttl; a ttl of zero or less stores it without expiry.
	Set(ctx context.Context, key string, val []byte, ttl time.Duration) error
}

// Tolerant wraps a Cache so that nothing fails because the cache failed: a Get error becomes a miss and a Set
// error is dropped, each reported to OnError. An outage is logged once when it starts (a warning) and once when
// the cache answers again, not per failed call: a cache that is down under load would otherwise flood the log.
// The zero value with Cache set works; it is safe for concurrent use.
type Tolerant struct {
	// Cache is the wrapped cache; required.
	Cache Cache
	// Logger receives the outage's start and end; default slog.Default().
	Logger *slog.Logger
	// OnError, if set, is called once per failure with the operation ("get" or "set") and the error, so the
	// caller can count failures (e.g. a Prometheus counter).
	OnError func(op string, err error)

	down atomic.Bool // an outage is under way
}

var _ Cache = (*Tolerant)(nil)

// Get returns the wrapped cache's value, or a miss with a nil error if the wrapped cache failed.
func (t *Tolerant) Get(ctx context.Context, key string) ([]byte, bool, error) {
	val, ok, err := t.Cache.Get(ctx, key)
	if err != nil {
		t.report(ctx, "get", err)
		return nil, false, nil
	}
	t.recovered(ctx)
	return val, ok, nil
}

// Set stores the value in the wrapped cache; a failure is logged and reported, never returned.
func (t *Tolerant) Set(ctx context.Context, key string, val []byte, ttl time.Duration) error {
	if err := t.Cache.Set(ctx, key, val, ttl); err != nil {
		t.report(ctx, "set", err)
		return nil
	}
	t.recovered(ctx)
	return nil
}

func (t *Tolerant) report(ctx context.Context, op string, err error) {
	if !t.down.Swap(true) {
		t.logger().WarnContext(ctx, "cache failing: its failures are served as misses until it answers again", "op", op, "err", err)
	}
	if t.OnError != nil {
		t.OnError(op, err)
	}
}

func (t *Tolerant) recovered(ctx context.Context) {
	if t.down.Load() && t.down.Swap(false) {
		t.logger().InfoContext(ctx, "cache answers again")
	}
}

func (t *Tolerant) logger() *slog.Logger {
	if t.Logger == nil {
		return slog.Default()
	}
	return t.Logger
}
