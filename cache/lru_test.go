package cache

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// clock is a settable time source.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func TestLRUTTL(t *testing.T) {
	clk := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	c, err := NewLRU(LRUConfig{Size: 10, Now: clk.now})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	_ = c.Set(ctx, "short", []byte("s"), time.Minute)
	_ = c.Set(ctx, "forever", []byte("f"), 0)
	tests := []struct {
		after     time.Duration
		key       string
		wantHit   bool
		wantValue string
	}{
		{0, "short", true, "s"},
		{59 * time.Second, "short", true, "s"},
		{time.Minute, "short", false, ""},
		{time.Minute, "forever", true, "f"},
		{1000 * time.Hour, "forever", true, "f"},
		{0, "absent", false, ""},
	}
	start := clk.t
	for _, tc := range tests {
		clk.t = start.Add(tc.after)
		got, ok, err := c.Get(ctx, tc.key)
		if err != nil || ok != tc.wantHit || string(got) != tc.wantValue {
			t.Errorf("after %v Get(%q) = %q, %v, %v; want %q, %v, nil", tc.after, tc.key, got, ok, err, tc.wantValue, tc.wantHit)
		}
	}
	if c.Len() != 1 {
		t.Errorf("Len after the expired entry was read = %d, want 1", c.Len())
	}
}

func TestLRUSizeBound(t *testing.T) {
	c, err := NewLRU(LRUConfig{Size: 3})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, k := range []string{"a", "b", "c"} {
		_ = c.Set(ctx, k, []byte(k), 0)
	}
	_, _, _ = c.Get(ctx, "a") // a is now the most recently used; b is the eviction candidate
	_ = c.Set(ctx, "d", []byte("d"), 0)
	got := map[string]bool{}
	for _, k := range []string{"a", "b", "c", "d"} {
		_, ok, _ := c.Get(ctx, k)
		got[k] = ok
	}
	want := map[string]bool{"a": true, "b": false, "c": true, "d": true}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("present after eviction = %v, want %v", got, want)
	}
}

func TestLRUCopiesValue(t *testing.T) {
	c, err := NewLRU(LRUConfig{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	buf := []byte("original")
	_ = c.Set(ctx, "k", buf, 0)
	copy(buf, "mutated!")
	if got, _, _ := c.Get(ctx, "k"); string(got) != "original" {
		t.Errorf("Get after the caller reused its buffer = %q, want %q", got, "original")
	}
}

func TestNewLRURejectsNegativeSize(t *testing.T) {
	if _, err := NewLRU(LRUConfig{Size: -1}); err == nil {
		t.Error("NewLRU(Size: -1) returned no error")
	}
}

func BenchmarkLRUGetHit(b *testing.B) {
	c, err := NewLRU(LRUConfig{})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	_ = c.Set(ctx, "k", make([]byte, 4<<10), time.Hour)
	b.ReportAllocs()
	for b.Loop() {
		if _, ok, _ := c.Get(ctx, "k"); !ok {
			b.Fatal("miss")
		}
	}
}
