package ratelimit

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/ragproxy/ragproxy/cache"
	"github.com/ragproxy/ragproxy/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// stores are the stores under test: in process with a clock the test moves, and on a real Redis.
func stores(t *testing.T) map[string]struct {
	store Store
	wait  func(key string, d time.Duration)
} {
	now := time.Unix(1000, 0)
	mem := &Memory{now: func() time.Time { return now }}
	r, err := cache.NewRedis(cache.RedisConfig{URL: redistest.URL(t), Timeout: 5 * time.Second,
		Prefix: fmt.Sprintf("test:%s:%d:", t.Name(), time.Now().UnixNano())})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	rs := NewRedis(r.Scripter(), r.Prefix())
	return map[string]struct {
		store Store
		wait  func(key string, d time.Duration)
	}{
		"memory": {mem, func(_ string, d time.Duration) { now = now.Add(d) }},
		// The script reads the server's clock; a bucket last refilled d earlier is one whose time is moved back
		// by d, which passes d for that key without waiting it out.
		"redis": {rs, func(key string, d time.Duration) {
			if err := ageScript.Run(context.Background(), r.Scripter(), []string{rs.prefix + key}, d.Seconds()).Err(); err != nil {
				t.Fatalf("age bucket %s: %v", key, err)
			}
		}},
	}
}

// ageScript moves a bucket's last refill back by ARGV[1] seconds.
var ageScript = redis.NewScript(`
local at = tonumber(redis.call("HGET", KEYS[1], "at"))
if at == nil then return redis.error_reply("no bucket") end
redis.call("HSET", KEYS[1], "at", tostring(at - tonumber(ARGV[1])))
return 1
`)

func TestBuckets(t *testing.T) {
	ctx := context.Background()
	for name, s := range stores(t) {
		t.Run(name, func(t *testing.T) {
			l := Limit{Rate: 5, Burst: 3} // three at once, then one every 200ms
			for i := range 3 {
				if r, err := s.store.Take(ctx, "k", 1, l, false); err != nil || !r.Allowed {
					t.Fatalf("take %d of the burst refused: %+v %v", i, r, err)
				}
			}
			r, err := s.store.Take(ctx, "k", 1, l, false)
			if err != nil || r.Allowed || r.RetryAfter <= 0 || r.RetryAfter > 200*time.Millisecond {
				t.Fatalf("a take past the burst: %+v %v; want refused, retry within 200ms", r, err)
			}
			if r, _ := s.store.Take(ctx, "other", 1, l, false); !r.Allowed {
				t.Errorf("another key shares the bucket")
			}
			s.wait("k", 250*time.Millisecond)
			if r, _ := s.store.Take(ctx, "k", 1, l, false); !r.Allowed {
				t.Errorf("refilled token refused: %+v", r)
			}
			r, _ = s.store.Take(ctx, "k", 10, l, true)
			if !(r.Remaining < -9) || r.Allowed || r.Reset <= 2*time.Second {
				t.Errorf("a forced take must leave the bucket in debt: %+v", r)
			}
			if r, _ := s.store.Take(ctx, "k", 1, l, false); r.Allowed {
				t.Errorf("a bucket in debt gave a token: %+v", r)
			}
		})
	}
}

func TestMemorySweepsFullBuckets(t *testing.T) {
	now := time.Unix(0, 0)
	m := &Memory{MaxBuckets: 10, now: func() time.Time { return now }}
	for i := range 10 {
		m.Take(context.Background(), fmt.Sprint(i), 1, PerMinute(60), false)
	}
	now = now.Add(2 * time.Second) // every bucket is full again
	m.Take(context.Background(), "new", 1, PerMinute(60), false)
	if len(m.buckets) != 1 {
		t.Errorf("buckets kept = %d, want only the new one", len(m.buckets))
	}
}
