package cache

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/ragproxy/ragproxy/internal/redistest"
)

func TestRedisGetSet(t *testing.T) {
	r := newTestRedis(t, redistest.URL(t), generousTimeout)
	ctx := context.Background()
	if err := r.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := r.Get(ctx, "absent"); err != nil || ok {
		t.Fatalf("Get(absent) = ok %v, err %v; want a miss", ok, err)
	}
	tests := []struct {
		key string
		val []byte
	}{
		{"a", []byte("alpha")},
		{"empty", []byte{}},
		{"binary", []byte{0, 255, '\r', '\n', 0}},
		{"big", bytes.Repeat([]byte("x"), 1<<20)},
	}
	for _, tc := range tests {
		t.Run(tc.key, func(t *testing.T) {
			if err := r.Set(ctx, tc.key, tc.val, time.Minute); err != nil {
				t.Fatal(err)
			}
			got, ok, err := r.Get(ctx, tc.key)
			if err != nil || !ok {
				t.Fatalf("Get = ok %v, err %v; want a hit", ok, err)
			}
			if !bytes.Equal(tc.val, got) {
				t.Errorf("Get = %d bytes %.40q, want %d bytes %.40q", len(got), got, len(tc.val), tc.val)
			}
		})
	}
}

func TestRedisTTL(t *testing.T) {
	r := newTestRedis(t, redistest.URL(t), generousTimeout)
	ctx := context.Background()
	if err := r.Set(ctx, "short", []byte("v"), time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := r.Set(ctx, "forever", []byte("v"), 0); err != nil {
		t.Fatal(err)
	}
	// The key carries the TTL (Redis then expires it, its PTTL contract); a wait for the expiry would test the
	// clock. PTTL is -1 for a key without expiry.
	if ttl, err := r.client.PTTL(ctx, r.prefix+"short").Result(); err != nil || ttl <= 0 || ttl > time.Minute {
		t.Errorf("PTTL(short) = %v, %v; want within (0, 1m]", ttl, err)
	}
	if ttl, err := r.client.PTTL(ctx, r.prefix+"forever").Result(); err != nil || ttl != -1 {
		t.Errorf("PTTL(forever) = %v, %v; want -1 (no expiry)", ttl, err)
	}
	if _, ok, err := r.Get(ctx, "forever"); err != nil || !ok {
		t.Errorf("Get(forever) = ok %v, err %v; want a hit", ok, err)
	}
}

// failures records what a Tolerant reported.
type failures struct {
	mu  sync.Mutex
	ops []string
}

func (f *failures) record(op string, _ error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ops = append(f.ops, op)
}

func (f *failures) got() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.ops...)
}

// TestRedisUnavailable checks that an unreachable, a killed and a hung server all make Get a miss and Set a
// no-op through Tolerant, with each failure logged and reported, and that the raw Redis cache reports them.
func TestRedisUnavailable(t *testing.T) {
	const timeout = 50 * time.Millisecond
	tests := []struct {
		name  string
		setup func(t *testing.T) string // returns the URL to use, after making it fail
	}{
		{"closed port", func(t *testing.T) string {
			return fmt.Sprintf("redis://127.0.0.1:%d/0", redistest.FreePort(t))
		}},
		{"killed server", func(t *testing.T) string {
			s := redistest.Start(t)
			s.Kill()
			return s.URL
		}},
		{"hung server", func(t *testing.T) string {
			s := redistest.Start(t)
			if err := s.Hang(); err != nil {
				t.Fatal(err)
			}
			return s.URL
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			url := tc.setup(t)
			raw := newTestRedis(t, url, timeout)
			var logs bytes.Buffer
			var fails failures
			c := &Tolerant{Cache: raw, Logger: slog.New(slog.NewTextHandler(&logs, nil)), OnError: fails.record}
			ctx := context.Background()

			if _, _, err := raw.Get(ctx, "k"); err == nil {
				t.Fatal("raw Get on an unavailable server returned no error")
			}
			start := time.Now()
			val, ok, err := c.Get(ctx, "k")
			elapsed := time.Since(start)
			if err != nil || ok || val != nil {
				t.Errorf("Tolerant.Get = %q, %v, %v; want a miss without error", val, ok, err)
			}
			if err := c.Set(ctx, "k", []byte("v"), time.Minute); err != nil {
				t.Errorf("Tolerant.Set = %v; want nil", err)
			}
			if diff := cmp.Diff([]string{"get", "set"}, fails.got()); diff != "" {
				t.Errorf("reported failures (-want +got):\n%s", diff)
			}
			if n := strings.Count(logs.String(), "cache failing"); n != 1 {
				t.Errorf("logged the outage %d times, want once; log:\n%s", n, logs.String())
			}
			t.Logf("miss served after %v (timeout %v)", elapsed, timeout)
		})
	}
}

// TestRedisCallerDeadline checks that a caller's own deadline shorter than the cache timeout is respected.
func TestRedisCallerDeadline(t *testing.T) {
	s := redistest.Start(t)
	if err := s.Hang(); err != nil {
		t.Fatal(err)
	}
	r := newTestRedis(t, s.URL, time.Hour)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	// Were the caller's deadline ignored, Get would wait out the hour-long timeout and the test would time out.
	if _, _, err := r.Get(ctx, "k"); err == nil {
		t.Error("Get with an expiring context on a hung server returned no error")
	}
}

func TestRedisConfigRedacted(t *testing.T) {
	tests := []struct{ url, want string }{
		{"redis://:s3cret@cache:6379/0", "redis://:xxxxx@cache:6379/0"},
		{"rediss://user:s3cret@cache:6380", "rediss://user:xxxxx@cache:6380"},
		{"redis://cache:6379", "redis://cache:6379"},
		{"redis://%zz:s3cret@cache", "<unparsable url>"},
	}
	for _, tc := range tests {
		if got := (RedisConfig{URL: tc.url}).Redacted(); got != tc.want {
			t.Errorf("Redacted(%q) = %q, want %q", tc.url, got, tc.want)
		}
	}
	if _, err := NewRedis(RedisConfig{URL: "redis://:s3cret@cache:6379/notadb"}); err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("NewRedis with a bad URL = %v; want an error that hides the password", err)
	}
}

func BenchmarkRedisGetHit(b *testing.B) {
	for _, size := range []int{256, 4 << 10, 64 << 10} {
		b.Run(fmt.Sprintf("bytes=%d", size), func(b *testing.B) {
			r := newTestRedis(b, redistest.URL(b), 0)
			ctx := context.Background()
			val := bytes.Repeat([]byte("a"), size)
			if err := r.Set(ctx, "k", val, time.Hour); err != nil {
				b.Fatal(err)
			}
			lat := make([]time.Duration, 0, b.N)
			failed := 0
			b.ReportAllocs()
			b.SetBytes(int64(size))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				start := time.Now()
				got, ok, err := r.Get(ctx, "k")
				lat = append(lat, time.Since(start))
				switch {
				case err != nil:
					// Past the 50 ms timeout the proxy would serve a miss; count it rather than abort the run.
					failed++
				case !ok || len(got) != size:
					b.Fatalf("Get = %d bytes, %v; want a %d-byte hit", len(got), ok, size)
				}
			}
			b.StopTimer()
			reportPercentiles(b, lat)
			b.ReportMetric(float64(failed)/float64(b.N), "timeouts/op")
		})
	}
}

// newTestRedis returns a Redis cache on url with a key prefix private to tb.
func newTestRedis(tb testing.TB, url string, timeout time.Duration) *Redis {
	tb.Helper()
	r, err := NewRedis(RedisConfig{URL: url, Timeout: timeout, Prefix: fmt.Sprintf("test:%s:%d:", tb.Name(), time.Now().UnixNano())})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = r.Close() })
	return r
}

// generousTimeout is the Redis timeout of tests about behaviour rather than timeouts, so that a loaded
// machine (or the race detector) does not turn a slow reply into a spurious failure.
const generousTimeout = 5 * time.Second
