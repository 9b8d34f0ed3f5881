package cache

import (
	"context"
	"log/slog"
)

// BackendConfig chooses the cache backend a server keeps its caches in. The zero value is an in-process LRU.
type BackendConfig struct {
	// Off disables caching: Open returns a nil Cache. Default false.
	Off bool
	// RedisURL, when set, is the Redis to use, redis://[user:password@]host:port/db; default "": in process.
	// It may hold a password: log Name, never the URL.
	RedisURL string
}

// Name describes the backend for logs, with Redis's password masked: "off", "redis URL" or "in-process".
func (c BackendConfig) Name() string {
	switch {
	case c.Off:
		return "off"
	case c.RedisURL != "":
		return "redis " + RedisConfig{URL: c.RedisURL}.Redacted()
	}
	return "in-process"
}

// Open opens the backend: Redis when RedisURL is set, else an in-process LRU; nil when Off. A Redis that is
// down at start or later only costs misses, so it is logged and not fatal. The returned func releases the
// backend.
func Open(ctx context.Context, c BackendConfig, logger *slog.Logger) (Cache, func(), error) {
	if c.Off {
		return nil, func() {}, nil
	}
	if c.RedisURL == "" {
		lru, err := NewLRU(LRUConfig{})
		if err != nil {
			return nil, nil, err
		}
		return lru, func() {}, nil
	}
	r, err := NewRedis(RedisConfig{URL: c.RedisURL})
	if err != nil {
		return nil, nil, err
	}
	if err := r.Ping(ctx); err != nil {
		logger.Warn("redis does not answer; requests are served uncached until it does", "redis", c.Name(), "err", err)
	}
	return r, func() { _ = r.Close() }, nil
}
