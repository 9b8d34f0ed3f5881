package server

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ragproxy/ragproxy/compat/openaitest"
)

// switchable is a backend whose probe fails while down is set, counting its probes.
type switchable struct {
	down   atomic.Bool
	probes atomic.Int32
}

func (b *switchable) probe(context.Context) error {
	b.probes.Add(1)
	if b.down.Load() {
		return errors.New("connection refused")
	}
	return nil
}

// TestReadyzReportsBackends checks that /readyz names each backend, fails while a required one is down, stays
// ready while only an optional one is, and that /healthz ignores the backends altogether.
func TestReadyzReportsBackends(t *testing.T) {
	var vectors, cache switchable
	var probed []string
	ready := NewReadiness(ReadinessConfig{Backends: []Backend{
		{Name: "qdrant", Required: true, Probe: vectors.probe},
		{Name: "redis", Probe: cache.probe},
	}, OnProbe: func(name string, up bool) {
		if !up {
			probed = append(probed, name)
		}
	}})
	clock := time.Unix(1_700_000_000, 0)
	ready.now = func() time.Time { return clock }
	h := newHarness(t, harnessOpts{cfg: Config{Ready: ready}, fake: openaitest.Config{}})
	get := func(path string) (int, map[string]any) {
		t.Helper()
		status, body := adminCall(t, h, http.MethodGet, path, "", "")
		var v map[string]any
		if err := json.Unmarshal([]byte(body), &v); err != nil {
			t.Fatalf("%s: %v: %s", path, err, body)
		}
		return status, v
	}
	later := func() { clock = clock.Add(3 * time.Second) }

	status, body := get("/readyz")
	want := map[string]any{"status": "ready", "backends": map[string]any{
		"qdrant": map[string]any{"status": "up", "required": true},
		"redis":  map[string]any{"status": "up", "required": false},
	}}
	if status != 200 || cmp.Diff(want, body) != "" {
		t.Errorf("all up: %d %s", status, cmp.Diff(want, body))
	}

	cache.down.Store(true)
	later()
	status, body = get("/readyz")
	want["backends"].(map[string]any)["redis"] = map[string]any{"status": "down", "required": false, "error": "connection refused"}
	if status != 200 || cmp.Diff(want, body) != "" {
		t.Errorf("cache down: %d (want 200, the cache is optional) %s", status, cmp.Diff(want, body))
	}

	vectors.down.Store(true)
	before := vectors.probes.Load()
	status, _ = get("/readyz")
	if status != 200 || vectors.probes.Load() != before {
		t.Errorf("within CacheFor: %d after %d new probes, want the cached 200 and no probe", status, vectors.probes.Load()-before)
	}
	later()
	status, body = get("/readyz")
	msg, _ := body["error"].(map[string]any)["message"].(string)
	if status != http.StatusServiceUnavailable || !strings.Contains(msg, "qdrant: connection refused") || strings.Contains(msg, "redis") {
		t.Errorf("qdrant down: %d %v, want 503 naming qdrant alone", status, body)
	}
	if status, _ := get("/healthz"); status != 200 {
		t.Errorf("healthz with qdrant down: %d, want 200 (liveness only)", status)
	}
	if got, want := probed, []string{"redis", "qdrant", "redis"}; !cmp.Equal(want, got) {
		t.Errorf("OnProbe downs %v, want %v", got, want)
	}

	vectors.down.Store(false)
	later()
	if status, _ := get("/readyz"); status != 200 {
		t.Errorf("qdrant back: %d, want 200", status)
	}
}

// TestReadinessTimeout checks that a backend that hangs fails the check within the timeout instead of holding it.
func TestReadinessTimeout(t *testing.T) {
	hang := func(ctx context.Context) error {
		<-ctx.Done()
		return ctx.Err()
	}
	ready := NewReadiness(ReadinessConfig{Backends: []Backend{{Name: "neo4j", Required: true, Probe: hang}}, Timeout: time.Millisecond})
	rep := ready.Check(context.Background())
	if rep.Ready || rep.Backends["neo4j"].Status != "down" || !strings.Contains(rep.Backends["neo4j"].Error, "deadline") {
		t.Errorf("hanging neo4j: %+v, want not ready with a deadline error", rep)
	}
}
