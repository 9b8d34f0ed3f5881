package retrieval

import (
	"sync"
	"sync/atomic"
)

// Source hands out the retriever a search runs on, and a func to call when the search is done with it. A
// *Retriever is its own source; a *Live switches between index versions.
type Source interface {
	Acquire() (r *Retriever, release func())
}

var (
	_ Source = (*Retriever)(nil)
	_ Source = (*Live)(nil)
)

// Acquire implements Source: a fixed retriever needs no release.
func (r *Retriever) Acquire() (*Retriever, func()) { return r, func() {} }

// Live serves one index version at a time and switches to another without stopping: a search that acquired a
// version keeps it until it releases it, searches that start after Swap get the new one, and a replaced version's
// release func runs once its last search has ended (at once when none holds it). So no search fails or mixes
// versions during a switch, and a version's resources (backend connections, bound to the collections of that
// version) outlive every search that uses them. Safe for concurrent use.
type Live struct {
	cur atomic.Pointer[liveVersion]
	mu  sync.Mutex // serialises Swap
}

// liveVersion is one version Live has served, with the searches holding it.
type liveVersion struct {
	r       *Retriever
	refs    atomic.Int64
	retired atomic.Bool
	once    sync.Once
	release func()
}

// NewLive serves r; release, when not nil, runs once r has been replaced and its last search has ended.
func NewLive(r *Retriever, release func()) *Live {
	l := &Live{}
	l.cur.Store(newLiveVersion(r, release))
	return l
}

func newLiveVersion(r *Retriever, release func()) *liveVersion {
	if release == nil {
		release = func() {}
	}
	return &liveVersion{r: r, release: release}
}

// Acquire implements Source: the version being served, held until release is called (once; later calls do
// nothing).
func (l *Live) Acquire() (*Retriever, func()) {
	for {
		v := l.cur.Load()
		v.refs.Add(1)
		// A Swap between the load and the count would let v be released while this search holds it: check that v
		// is still the one served, else give it back and take the new one.
		if l.cur.Load() == v {
			var once sync.Once
			return v.r, func() { once.Do(v.done) }
		}
		v.done()
	}
}

// Current returns the version being served, for reading its manifest; searches use Acquire.
func (l *Live) Current() *Retriever { return l.cur.Load().r }

// Swap serves r from now on and returns the retriever it replaces. The replaced version's release func runs when
// its last search ends.
func (l *Live) Swap(r *Retriever, release func()) *Retriever {
	l.mu.Lock()
	defer l.mu.Unlock()
	old := l.cur.Swap(newLiveVersion(r, release))
	old.retired.Store(true)
	if old.refs.Load() == 0 {
		old.once.Do(old.release)
	}
	return old.r
}

// Close retires the version being served, for shutdown: its release func runs when its last search ends.
func (l *Live) Close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	v := l.cur.Load()
	v.retired.Store(true)
	if v.refs.Load() == 0 {
		v.once.Do(v.release)
	}
}

func (v *liveVersion) done() {
	if v.refs.Add(-1) == 0 && v.retired.Load() {
		v.once.Do(v.release)
	}
}
