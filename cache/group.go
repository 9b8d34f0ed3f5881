package cache

import (
	"context"
	"fmt"
	"time"

	"golang.org/x/sync/singleflight"
)

// Outcome says how a Group produced a value.
type Outcome int

const (
	// Hit means the value came from the cache.
	Hit Outcome = iota
	// Miss means this caller computed the value.
	Miss
	// Shared means another concurrent caller computed the value and this one waited for it.
	Shared
)

// String returns "hit", "miss" or "shared".
func (o Outcome) String() string {
	switch o {
	case Hit:
		return "hit"
	case Miss:
		return "miss"
	case Shared:
		return "shared"
	}
	return fmt.Sprintf("Outcome(%d)", int(o))
}

// ComputeFunc produces the value for a missed key; store reports whether the value may be cached (an answer
// cut short, for example, is returned but not stored).
type ComputeFunc func(ctx context.Context) (val []byte, store bool, err error)

// Group reads through a Cache and makes one computation for concurrent identical misses. Cache is required.
// A Group never fails because its cache failed: a Get error is a miss and a Set error leaves the value
// unstored; wrap the cache in a Tolerant to have those failures logged and counted.
type Group struct {
	// Cache holds the values; wrap failing backends in a Tolerant so a cache failure is a miss.
	Cache Cache
	// TTL is the time to live of stored values; zero stores them without expiry.
	TTL time.Duration

	flight singleflight.Group
}

type flightResult struct {
	val []byte
	hit bool
}

// Do returns the value for key from the cache or, on a miss, from compute, storing it when compute allows.
// Concurrent calls for the same key share one computation. The computation runs with the first caller's
// context values but not its cancellation, so one client going away does not fail the others waiting on the
// same key; each caller still returns as soon as its own ctx is done.
func (g *Group) Do(ctx context.Context, key string, compute ComputeFunc) ([]byte, Outcome, error) {
	if val, ok, err := g.Cache.Get(ctx, key); err == nil && ok {
		return val, Hit, nil
	}
	detached := context.WithoutCancel(ctx)
	// led is written only by the computation this caller started and read only after its result arrived.
	led := false
	ch := g.flight.DoChan(key, func() (any, error) {
		led = true
		// A flight that finished just before this one began may have stored the value already.
		if val, ok, err := g.Cache.Get(detached, key); err == nil && ok {
			return flightResult{val: val, hit: true}, nil
		}
		val, store, err := compute(detached)
		if err != nil {
			return nil, err
		}
		if store {
			_ = g.Cache.Set(detached, key, val, g.TTL) // see the type's comment
		}
		return flightResult{val: val}, nil
	})
	select {
	case <-ctx.Done():
		return nil, Miss, fmt.Errorf("cache: group wait: %w", ctx.Err())
	case res := <-ch:
		if res.Err != nil {
			return nil, Miss, res.Err
		}
		r := res.Val.(flightResult)
		switch {
		case r.hit:
			return r.val, Hit, nil
		case led:
			return r.val, Miss, nil
		}
		return r.val, Shared, nil
	}
}
