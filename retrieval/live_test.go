package retrieval

import (
	"sync"
	"sync/atomic"
	"testing"
)

func TestLiveReleasesAVersionAfterItsLastSearch(t *testing.T) {
	v1, v2, v3 := &Retriever{}, &Retriever{}, &Retriever{}
	var released []string
	l := NewLive(v1, func() { released = append(released, "v1") })

	r, release := l.Acquire()
	if r != v1 {
		t.Fatal("Acquire before any Swap must return the first version")
	}
	if old := l.Swap(v2, func() { released = append(released, "v2") }); old != v1 {
		t.Error("Swap must return the version it replaced")
	}
	if len(released) != 0 {
		t.Fatalf("v1 released while a search holds it: %v", released)
	}
	if got, rel := l.Acquire(); got != v2 {
		t.Error("a search after Swap must get the new version")
	} else {
		rel()
	}
	release()
	release() // a second call must not release again
	if len(released) != 1 || released[0] != "v1" {
		t.Fatalf("after its last search ends v1 must be released once, released = %v", released)
	}
	l.Swap(v3, nil)
	if len(released) != 2 || released[1] != "v2" {
		t.Errorf("a version no search holds must be released at Swap, released = %v", released)
	}
	if l.Current() != v3 {
		t.Error("Current must be the last swapped-in version")
	}
}

// TestLiveConcurrentSwaps runs searches against repeated swaps: every version but the served one ends up
// released exactly once, and none is released while a search holds it.
func TestLiveConcurrentSwaps(t *testing.T) {
	type state struct {
		held     atomic.Int64
		released atomic.Int64
	}
	const versions = 200
	states := make(map[*Retriever]*state, versions)
	rs := make([]*Retriever, versions)
	for i := range rs {
		rs[i] = &Retriever{}
		states[rs[i]] = &state{}
	}
	var bad atomic.Int64
	releaser := func(r *Retriever) func() {
		return func() {
			st := states[r]
			if st.held.Load() != 0 {
				bad.Add(1)
			}
			st.released.Add(1)
		}
	}
	l := NewLive(rs[0], releaser(rs[0]))
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				r, release := l.Acquire()
				st := states[r]
				st.held.Add(1)
				if st.released.Load() != 0 {
					bad.Add(1)
				}
				st.held.Add(-1)
				release()
			}
		}()
	}
	for _, r := range rs[1:] {
		l.Swap(r, releaser(r))
	}
	close(stop)
	wg.Wait()
	if bad.Load() != 0 {
		t.Errorf("%d times a version was released while a search held it", bad.Load())
	}
	for i, r := range rs {
		want := int64(1)
		if i == versions-1 {
			want = 0
		}
		if got := states[r].released.Load(); got != want {
			t.Errorf("version %d released %d times, want %d", i, got, want)
		}
	}
}
