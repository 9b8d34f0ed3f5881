package admin

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"runtime/debug"
	"sync"
	"time"

	"github.com/ragproxy/ragproxy/compat"
	"github.com/ragproxy/ragproxy/index"
	"github.com/ragproxy/ragproxy/observability"
	"github.com/ragproxy/ragproxy/retrieval"
	"github.com/ragproxy/ragproxy/server"
)

// reloader switches the server to the index version that the directory's CURRENT names, without a restart:
// when CURRENT changes (polled), on a signal (SIGHUP), and through the admin API. Loading happens beside the
// version being served, which keeps answering until the new one is ready; requests in flight finish on the version they started with
// (see retrieval.Live), and a version's backends are closed when its last request ends. A version that fails to
// load is logged and counted, and the old one stays.
type reloader struct {
	dir  string
	live *retrieval.Live
	// open loads the current version with its backends; release closes them.
	open    func(ctx context.Context) (r *retrieval.Retriever, release func(), err error)
	logger  *slog.Logger
	metrics *observability.Metrics
	name    string // the assistant's model id, the metrics' label

	mu       sync.Mutex // serialises reloads
	seen     string     // CURRENT's content at the last load attempt
	loadedAt time.Time
	// retryAt is when the watcher tries again a version that failed to load (zero: it does not), and backoff the
	// wait after the next failure: a version may fail only until ingest has synced its backends.
	retryAt time.Time
	backoff time.Duration
}

// Bounds of the watcher's wait before trying a version that failed to load again.
const (
	minReloadRetry = 10 * time.Second
	maxReloadRetry = 5 * time.Minute
)

// reloadResult is what a reload did: the body of POST /admin/index/reload.
type reloadResult struct {
	Object   string `json:"object"`
	Switched bool   `json:"switched"`
	Version  string `json:"version"`
	Previous string `json:"previous,omitempty"`
	Pages    int    `json:"pages"`
	Chunks   int    `json:"chunks"`
	TookMS   int64  `json:"took_ms"`
}

// reload loads the version CURRENT names and serves it if it differs from the one served.
func (rl *reloader) reload(ctx context.Context, reason string) (reloadResult, error) {
	rl.mu.Lock()
	defer rl.mu.Unlock()
	start := time.Now()
	served := rl.live.Current().Index().Manifest
	name, err := index.Current(rl.dir)
	if err == nil {
		rl.seen = name
		if name == "v-"+served.Version {
			rl.retryAt, rl.backoff = time.Time{}, 0
			rl.countReload("unchanged")
			return rl.result(false, "", start), nil
		}
		var r *retrieval.Retriever
		var release func()
		if r, release, err = rl.open(ctx); err == nil {
			m := r.Index().Manifest
			if m.Version == served.Version { // CURRENT moved back and forth while loading
				release()
				rl.countReload("unchanged")
				return rl.result(false, "", start), nil
			}
			rl.retryAt, rl.backoff = time.Time{}, 0
			rl.live.Swap(r, func() {
				release()
				rl.logger.Info("index version released: its last request ended", "version", served.Version)
				// The old version is garbage now: return its memory (and the new one's loading garbage) to the
				// system, off the request that happened to end last.
				go debug.FreeOSMemory()
			})
			rl.loadedAt = time.Now()
			if rl.metrics != nil {
				rl.metrics.SetIndexInfo(rl.name, m.Version, m.Embedder, m.Pages, m.Chunks)
				rl.metrics.SetIndexBuilt(rl.name, m.BuiltAt)
			}
			rl.countReload("switched")
			res := rl.result(true, served.Version, start)
			rl.logger.Info("index reloaded", "reason", reason, "version", m.Version, "previous", served.Version,
				"pages", m.Pages, "chunks", m.Chunks, "took", time.Since(start).Round(time.Millisecond))
			return res, nil
		}
	}
	rl.backoff = min(max(2*rl.backoff, minReloadRetry), maxReloadRetry)
	rl.retryAt = time.Now().Add(rl.backoff)
	rl.countReload("failed")
	rl.logger.Error("index reload failed; still serving the loaded version", "reason", reason, "index", rl.dir,
		"version", served.Version, "err", err)
	return reloadResult{}, err
}

func (rl *reloader) result(switched bool, previous string, start time.Time) reloadResult {
	m := rl.live.Current().Index().Manifest
	return reloadResult{Object: "index.reload", Switched: switched, Version: m.Version, Previous: previous,
		Pages: m.Pages, Chunks: m.Chunks, TookMS: time.Since(start).Milliseconds()}
}

// watch polls CURRENT every interval until ctx ends and reloads when it names another version than the last
// attempt saw. A version that failed to load is tried again after a growing pause (10 s doubling to 5 min), at
// once when CURRENT changes again, or on SIGHUP or the admin call. Polling, not file events, because the index often sits on a shared volume (NFS, a
// Kubernetes persistent volume) where events from another machine's writes do not arrive.
func (rl *reloader) watch(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		name, err := index.Current(rl.dir)
		rl.mu.Lock()
		changed := err == nil && name != rl.seen
		retry := !changed && !rl.retryAt.IsZero() && time.Now().After(rl.retryAt)
		rl.mu.Unlock()
		switch {
		case changed:
			_, _ = rl.reload(ctx, "CURRENT changed") // logged and counted there
		case retry:
			_, _ = rl.reload(ctx, "retry")
		}
	}
}

// onSignal reloads on every value from signals until ctx ends.
func (rl *reloader) onSignal(ctx context.Context, signals <-chan os.Signal) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-signals:
			_, _ = rl.reload(ctx, "SIGHUP")
		}
	}
}

// countReload counts a reload's result, when there are metrics.
func (rl *reloader) countReload(result string) {
	if rl.metrics != nil {
		rl.metrics.IndexReload(result)
	}
}

// indexInfo is the body of GET /admin/index.
type indexInfo struct {
	Object   string    `json:"object"`
	Version  string    `json:"version"`
	Pages    int       `json:"pages"`
	Chunks   int       `json:"chunks"`
	Embedder string    `json:"embedder"`
	Source   string    `json:"source"`
	BuiltAt  time.Time `json:"built_at"`
	LoadedAt time.Time `json:"loaded_at"`
	Dir      string    `json:"dir"`
}

// routes are the admin routes of the index being served.
func (rl *reloader) routes() []server.Route {
	return []server.Route{
		{Method: http.MethodGet, Path: "/index", Handle: func(context.Context, *server.Request) (any, error) {
			rl.mu.Lock()
			loaded := rl.loadedAt
			rl.mu.Unlock()
			m := rl.live.Current().Index().Manifest
			return indexInfo{Object: "index", Version: m.Version, Pages: m.Pages, Chunks: m.Chunks, Embedder: m.Embedder,
				Source: m.Source, BuiltAt: m.BuiltAt, LoadedAt: loaded, Dir: rl.dir}, nil
		}},
		{Method: http.MethodPost, Path: "/index/reload", Handle: func(ctx context.Context, _ *server.Request) (any, error) {
			res, err := rl.reload(ctx, "admin")
			if err != nil {
				if errors.Is(err, context.Canceled) {
					return nil, err
				}
				return nil, &compat.APIError{Status: http.StatusConflict, Type: compat.TypeInvalidRequest, Code: "index_not_loaded",
					Message: fmt.Sprintf("The index could not be loaded; the server still serves version %s: %v",
						rl.live.Current().Index().Manifest.Version, err), Err: err}
			}
			return res, nil
		}},
	}
}
