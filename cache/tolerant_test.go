package cache

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// flakyCache fails while down is set.
type flakyCache struct {
	Cache
	down bool
}

func (f *flakyCache) Get(ctx context.Context, key string) ([]byte, bool, error) {
	if f.down {
		return nil, false, errors.New("connection refused")
	}
	return f.Cache.Get(ctx, key)
}

func (f *flakyCache) Set(ctx context.Context, key string, val []byte, ttl time.Duration) error {
	if f.down {
		return errors.New("connection refused")
	}
	return f.Cache.Set(ctx, key, val, ttl)
}

// TestTolerantLogsOutagesOnce checks that an outage is logged when it starts and when it ends, not per call,
// while every failure is still reported.
func TestTolerantLogsOutagesOnce(t *testing.T) {
	lru, err := NewLRU(LRUConfig{})
	if err != nil {
		t.Fatal(err)
	}
	flaky := &flakyCache{Cache: lru, down: true}
	var logs bytes.Buffer
	failures := 0
	c := &Tolerant{Cache: flaky, Logger: slog.New(slog.NewTextHandler(&logs, nil)), OnError: func(string, error) { failures++ }}
	ctx := context.Background()
	for range 100 {
		c.Get(ctx, "k")
		c.Set(ctx, "k", []byte("v"), time.Minute)
	}
	flaky.down = false
	for range 10 {
		c.Get(ctx, "k")
	}
	flaky.down = true
	c.Get(ctx, "k")
	if failures != 201 {
		t.Errorf("reported failures = %d, want 201", failures)
	}
	got := logs.String()
	if strings.Count(got, "cache failing") != 2 || strings.Count(got, "cache answers again") != 1 {
		t.Errorf("want two outages logged once each and one recovery:\n%s", got)
	}
}
