package cache

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/ragproxy/ragproxy/internal/redistest"
)

func newTestLRU(t *testing.T) *LRU {
	t.Helper()
	c, err := NewLRU(LRUConfig{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestGroupCollapsesConcurrentMisses sends 50 identical concurrent requests, as a burst of clients would, and
// checks they make one computation.
func TestGroupCollapsesConcurrentMisses(t *testing.T) {
	for _, backend := range []string{"lru", "redis"} {
		t.Run(backend, func(t *testing.T) {
			var c Cache = newTestLRU(t)
			if backend == "redis" {
				c = &Tolerant{Cache: newTestRedis(t, redistest.URL(t), generousTimeout)}
			}
			const n = 50
			// Every caller looks in the cache before it joins a flight, and the first flight looks once more:
			// n+1 misses.
			watched := &watchedCache{Cache: c, misses: make(chan struct{}, 2*n+2), sets: make(chan struct{}, n)}
			g := &Group{Cache: watched, TTL: time.Minute}
			var calls atomic.Int32
			release := make(chan struct{})
			compute := func(ctx context.Context) ([]byte, bool, error) {
				calls.Add(1)
				<-release // hold the computation open until every caller is waiting on it
				return []byte("answer"), true, nil
			}
			var wg sync.WaitGroup
			outcomes := make([]Outcome, n)
			vals := make([]string, n)
			for i := range n {
				wg.Go(func() {
					v, o, err := g.Do(context.Background(), "k", compute)
					if err != nil {
						t.Error(err)
					}
					vals[i], outcomes[i] = string(v), o
				})
			}
			// Hold the computation until every caller has missed the cache: each would compute, were the misses
			// not collapsed. A caller that joins the flight only after it ended finds the stored value (a hit).
			for range n + 1 {
				<-watched.misses
			}
			close(release)
			wg.Wait()
			if got := calls.Load(); got != 1 {
				t.Errorf("computations = %d, want 1", got)
			}
			count := map[Outcome]int{}
			for i := range n {
				if vals[i] != "answer" {
					t.Errorf("caller %d got %q", i, vals[i])
				}
				count[outcomes[i]]++
			}
			if count[Miss] != 1 || count[Shared]+count[Hit] != n-1 {
				t.Errorf("outcomes = %v, want one miss and the rest shared or hit", count)
			}
			if v, o, err := g.Do(context.Background(), "k", compute); err != nil || o != Hit || string(v) != "answer" {
				t.Errorf("Do after the flight = %q, %v, %v; want a hit", v, o, err)
			}
		})
	}
}

func TestGroupOutcomes(t *testing.T) {
	errUpstream := errors.New("upstream down")
	tests := []struct {
		name      string
		store     bool
		err       error
		wantFirst Outcome
		wantErr   error
		wantNext  Outcome // outcome of a second call
	}{
		{"stored", true, nil, Miss, nil, Hit},
		{"not stored", false, nil, Miss, nil, Miss},
		{"error", false, errUpstream, Miss, errUpstream, Miss},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := &Group{Cache: newTestLRU(t)}
			compute := func(context.Context) ([]byte, bool, error) {
				if tc.err != nil {
					return nil, false, tc.err
				}
				return []byte("v"), tc.store, nil
			}
			_, o, err := g.Do(context.Background(), "k", compute)
			if o != tc.wantFirst || !errors.Is(err, tc.wantErr) {
				t.Errorf("first Do = %v, %v; want %v, %v", o, err, tc.wantFirst, tc.wantErr)
			}
			if _, o, _ := g.Do(context.Background(), "k", compute); o != tc.wantNext {
				t.Errorf("second Do = %v, want %v", o, tc.wantNext)
			}
		})
	}
}

// failingCache fails every call.
type failingCache struct{}

func (failingCache) Get(context.Context, string) ([]byte, bool, error) {
	return nil, false, errors.New("cache down")
}

func (failingCache) Set(context.Context, string, []byte, time.Duration) error {
	return errors.New("cache down")
}

func TestGroupSurvivesFailingCache(t *testing.T) {
	g := &Group{Cache: failingCache{}}
	v, o, err := g.Do(context.Background(), "k", func(context.Context) ([]byte, bool, error) {
		return []byte("v"), true, nil
	})
	if diff := cmp.Diff([]any{"v", Miss, nil}, []any{string(v), o, err}, cmp.Comparer(func(a, b error) bool { return a == b })); diff != "" {
		t.Errorf("Do on a failing cache (-want +got):\n%s", diff)
	}
}

// TestGroupWaiterCancellation checks that a waiter whose context ends returns at once while the computation
// carries on for the others and is stored.
func TestGroupWaiterCancellation(t *testing.T) {
	c := newTestLRU(t)
	watched := &watchedCache{Cache: c, sets: make(chan struct{}, 1)}
	g := &Group{Cache: watched}
	release := make(chan struct{})
	computeCtxErr := make(chan error, 1)
	leaderCtx, cancelLeader := context.WithCancel(context.Background())
	done := make(chan error, 1)
	computing := make(chan struct{})
	go func() {
		_, _, err := g.Do(leaderCtx, "k", func(ctx context.Context) ([]byte, bool, error) {
			close(computing)
			<-release
			computeCtxErr <- ctx.Err()
			return []byte("v"), true, nil
		})
		done <- err
	}()
	<-computing // the caller is waiting on the computation it started
	cancelLeader()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Do after its context was cancelled = %v, want context.Canceled", err)
	}
	close(release)
	if err := <-computeCtxErr; err != nil {
		t.Errorf("computation saw ctx.Err() = %v after a caller left; want nil", err)
	}
	// The computation finishes in the background and stores its value.
	<-watched.sets
	if v, ok, _ := c.Get(context.Background(), "k"); !ok || string(v) != "v" {
		t.Errorf("stored %q (found %v), want %q", v, ok, "v")
	}
}

// watchedCache tells a test of its misses and stores, each on a channel that must have room for them all.
type watchedCache struct {
	Cache
	misses, sets chan struct{}
}

func (w *watchedCache) Get(ctx context.Context, key string) ([]byte, bool, error) {
	v, ok, err := w.Cache.Get(ctx, key)
	if !ok && w.misses != nil {
		w.misses <- struct{}{}
	}
	return v, ok, err
}

func (w *watchedCache) Set(ctx context.Context, key string, val []byte, ttl time.Duration) error {
	err := w.Cache.Set(ctx, key, val, ttl)
	if w.sets != nil {
		w.sets <- struct{}{}
	}
	return err
}

func TestOutcomeString(t *testing.T) {
	got := []string{Hit.String(), Miss.String(), Shared.String(), Outcome(7).String()}
	if diff := cmp.Diff([]string{"hit", "miss", "shared", "Outcome(7)"}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
