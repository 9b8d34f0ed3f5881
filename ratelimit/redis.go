package ratelimit

import (
	"context"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"
)

// Redis keeps buckets on a Redis server, so that every replica of the proxy counts against the same limits. A
// take is one atomic script that reads the server's clock, so replicas' clocks do not matter.
type Redis struct {
	client redis.Scripter
	prefix string
}

var _ Store = (*Redis)(nil)

// NewRedis keeps buckets through client under keys starting with prefix.
func NewRedis(client redis.Scripter, prefix string) *Redis {
	return &Redis{client: client, prefix: prefix + "ratelimit:"}
}

// takeScript refills the bucket by the time passed, takes n tokens when it holds them (or when forced), stores it
// until it would be full again, and returns whether it took them and what is left.
var takeScript = redis.NewScript(`
local rate, burst, n, force = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4] == "1"
local t = redis.call("TIME")
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local b = redis.call("HMGET", KEYS[1], "tokens", "at")
local tokens, at = tonumber(b[1]), tonumber(b[2])
if tokens == nil then tokens, at = burst, now end
tokens = math.min(burst, tokens + math.max(0, now - at) * rate)
local allowed = 0
if tokens >= n then allowed = 1 end
if allowed == 1 or force then tokens = tokens - n end
redis.call("HSET", KEYS[1], "tokens", tostring(tokens), "at", tostring(now))
local full = 60
if rate > 0 then full = math.ceil((burst - tokens) / rate) + 1 end
redis.call("EXPIRE", KEYS[1], math.max(1, full))
return {allowed, tostring(tokens)}
`)

// Take implements Store.
func (r *Redis) Take(ctx context.Context, key string, n float64, l Limit, force bool) (Result, error) {
	f := "0"
	if force {
		f = "1"
	}
	v, err := takeScript.Run(ctx, r.client, []string{r.prefix + key}, l.Rate, l.Burst, n, f).Slice()
	if err != nil {
		return Result{}, fmt.Errorf("ratelimit: redis: %w", err)
	}
	if len(v) != 2 {
		return Result{}, fmt.Errorf("ratelimit: redis: unexpected reply %v", v)
	}
	allowed, _ := v[0].(int64)
	s, _ := v[1].(string)
	tokens, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return Result{}, fmt.Errorf("ratelimit: redis: %w", err)
	}
	return result(allowed == 1, tokens, n, l), nil
}
