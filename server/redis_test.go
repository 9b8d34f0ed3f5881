package server

import (
	"fmt"
	"testing"
	"time"

	"github.com/ragproxy/ragproxy/cache"
	"github.com/ragproxy/ragproxy/internal/redistest"
)

// newTestRedis returns a Redis cache on url with a key prefix private to tb.
func newTestRedis(tb testing.TB, url string) *cache.Redis {
	tb.Helper()
	r, err := cache.NewRedis(cache.RedisConfig{URL: url, Timeout: 5 * time.Second,
		Prefix: fmt.Sprintf("test:%s:%d:", tb.Name(), time.Now().UnixNano())})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = r.Close() })
	return r
}

// cacheBackends are the caches the response cache is tested on: the
// in-process LRU and a real Redis (skipped when none is available).
func cacheBackends() []struct {
	name string
	new  func(tb testing.TB) cache.Cache
} {
	return []struct {
		name string
		new  func(tb testing.TB) cache.Cache
	}{
		{"lru", func(tb testing.TB) cache.Cache {
			c, err := cache.NewLRU(cache.LRUConfig{})
			if err != nil {
				tb.Fatal(err)
			}
			return c
		}},
		{"redis", func(tb testing.TB) cache.Cache { return newTestRedis(tb, redistest.URL(tb)) }},
	}
}
