package cache

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// DefaultRedisTimeout bounds every Redis call whose config leaves Timeout at zero. A cache that answers
// slower than this is worth less than recomputing, so the caller is better served by a miss.
const DefaultRedisTimeout = 50 * time.Millisecond

// RedisConfig configures a Redis cache.
type RedisConfig struct {
	// URL is a redis:// or rediss:// URL as accepted by redis.ParseURL
	// (redis://[user:password@]host:port[/db][?options]); required.
	URL string
	// Timeout bounds each call (dial, write, read and the wait for a pooled connection); default
	// DefaultRedisTimeout.
	Timeout time.Duration
	// Prefix is prepended to every key so several deployments can share a server; default "ragproxy:".
	Prefix string
}

// Redacted returns the config's URL with any password replaced, for logging.
func (c RedisConfig) Redacted() string {
	return redactURL(c.URL)
}

// Redis is a Cache on a Redis server. Its errors are returned as they are; wrap it in a Tolerant to serve
// failures as misses.
type Redis struct {
	client  *redis.Client
	timeout time.Duration
	prefix  string
}

var _ Cache = (*Redis)(nil)

// NewRedis returns a Redis cache for cfg.URL. It does not connect: the first call does, and Ping checks the
// server is there.
func NewRedis(cfg RedisConfig) (*Redis, error) {
	opts, err := redis.ParseURL(cfg.URL)
	if err != nil {
		return nil, fmt.Errorf("cache: parse redis url %s: %w", redactURL(cfg.URL), err)
	}
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = DefaultRedisTimeout
	}
	opts.DialTimeout = timeout
	opts.ReadTimeout = timeout
	opts.WriteTimeout = timeout
	opts.PoolTimeout = timeout
	opts.ContextTimeoutEnabled = true
	// A failed cache call is served as a miss; retrying would only make the miss slower.
	opts.MaxRetries = -1
	opts.DialerRetries = 1
	// Skip CLIENT SETINFO on connect: older servers reject it and it costs a round trip per new connection.
	opts.DisableIdentity = true
	prefix := cfg.Prefix
	if prefix == "" {
		prefix = "ragproxy:"
	}
	return &Redis{client: redis.NewClient(opts), timeout: timeout, prefix: prefix}, nil
}

// Get returns the value stored under key; a missing key is a miss, not an error.
func (r *Redis) Get(ctx context.Context, key string) ([]byte, bool, error) {
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	val, err := r.client.Get(ctx, r.prefix+key).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("cache: redis get: %w", err)
	}
	return val, true, nil
}

// Set stores val under key for ttl (no expiry if ttl <= 0).
func (r *Redis) Set(ctx context.Context, key string, val []byte, ttl time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	if ttl < 0 {
		ttl = 0
	}
	if err := r.client.Set(ctx, r.prefix+key, val, ttl).Err(); err != nil {
		return fmt.Errorf("cache: redis set: %w", err)
	}
	return nil
}

// Ping checks that the server answers within the timeout.
func (r *Redis) Ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	if err := r.client.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("cache: redis ping: %w", err)
	}
	return nil
}

// Scripter is the server's connection pool for scripts of other stores that share it (rate limits), with the
// cache's timeouts.
func (r *Redis) Scripter() redis.Scripter { return r.client }

// Prefix is the prefix of the cache's keys; other stores sharing the server put theirs after it.
func (r *Redis) Prefix() string { return r.prefix }

// Close closes the connections to the server.
func (r *Redis) Close() error {
	if err := r.client.Close(); err != nil {
		return fmt.Errorf("cache: redis close: %w", err)
	}
	return nil
}
