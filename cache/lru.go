package cache

import (
	"context"
	"fmt"
	"sync"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
)

// DefaultLRUSize is the entry bound of an LRU whose config leaves Size at zero.
const DefaultLRUSize = 10000

// LRUConfig configures an LRU.
type LRUConfig struct {
	// Size bounds the number of entries; the least recently used entry is evicted beyond it. Default
	// DefaultLRUSize.
	Size int
	// Now returns the current time; default time.Now. Tests set it to move time.
	Now func() time.Time
}

// LRU is an in-process, size-bounded cache with a time to live per entry. An expired entry is a miss and is
// removed when it is next read or evicted.
type LRU struct {
	mu      sync.Mutex // guards the expiry check and removal as one step
	entries *lru.Cache[string, lruEntry]
	now     func() time.Time
}

type lruEntry struct {
	val     []byte
	expires time.Time // zero: never
}

var _ Cache = (*LRU)(nil)

// NewLRU returns an empty LRU.
func NewLRU(cfg LRUConfig) (*LRU, error) {
	size := cfg.Size
	if size == 0 {
		size = DefaultLRUSize
	}
	entries, err := lru.New[string, lruEntry](size)
	if err != nil {
		return nil, fmt.Errorf("cache: new lru: %w", err)
	}
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	return &LRU{entries: entries, now: now}, nil
}

// Get returns the live value stored under key. The returned slice is shared: callers must not modify it.
func (c *LRU) Get(_ context.Context, key string) ([]byte, bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries.Get(key)
	if !ok {
		return nil, false, nil
	}
	if !e.expires.IsZero() && !c.now().Before(e.expires) {
		c.entries.Remove(key)
		return nil, false, nil
	}
	return e.val, true, nil
}

// Set stores a copy of val under key for ttl (no expiry if ttl <= 0).
func (c *LRU) Set(_ context.Context, key string, val []byte, ttl time.Duration) error {
	e := lruEntry{val: append([]byte(nil), val...)}
	c.mu.Lock()
	defer c.mu.Unlock()
	if ttl > 0 {
		e.expires = c.now().Add(ttl)
	}
	c.entries.Add(key, e)
	return nil
}

// Len returns the number of entries held, expired ones included until they are read or evicted.
func (c *LRU) Len() int {
	return c.entries.Len()
}
