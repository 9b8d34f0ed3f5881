package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ragproxy/ragproxy/examples"
	"github.com/ragproxy/ragproxy/internal/ssetest"
	"github.com/ragproxy/ragproxy/observability"
	"github.com/ragproxy/ragproxy/retrieval"
	"github.com/ragproxy/ragproxy/retrieval/qdrant"
	"github.com/ragproxy/ragproxy/retrieval/qdrant/qdranttest"
	"github.com/ragproxy/ragproxy/tokenizer"
)

const (
	reloadQuestion = `{"model":"lakeshore","stream":true,"messages":[{"role":"user","content":"when do fall classes start 2024"}]}`
	oldStart       = "Monday, August 26, 2024"
	newStart       = "Thursday, August 29, 2024"
	testAdminKey   = "adm-0123456789abcdef"
	testClientKey  = "sk-client-0123456789"
)

// servedIndex is a serve process on the example site's index, started by startServe.
type servedIndex struct {
	site, idx, base string
}

// startServe ingests the example site and serves it offline on a free loopback port until the test ends, with
// the admin key testAdminKey.
func startServe(t *testing.T, args ...string) *servedIndex {
	t.Helper()
	return startServeAdmin(t, testAdminKey, args...)
}

// startServeAdmin is startServe with the admin keys adminKeys (none when empty).
func startServeAdmin(t *testing.T, adminKeys string, args ...string) *servedIndex {
	t.Helper()
	noBackendsEnv(t)
	t.Setenv("RAGPROXY_ADMIN_KEYS", adminKeys)
	site, idx := exampleSite(t)
	captureStdout(t)
	s := &servedIndex{site: site, idx: idx}
	s.ingest(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	s.base = "http://" + addr
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, append([]string{"serve", "--index", idx, "--listen", addr, "--api-keys", testClientKey,
			"--log-level", "error"}, args...))
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("serve: %v", err)
		}
	})
	for i := 0; ; i++ {
		if r, err := http.Get(s.base + "/readyz"); err == nil {
			r.Body.Close()
			if r.StatusCode == http.StatusOK {
				return s
			}
		}
		select {
		case err := <-done:
			t.Fatalf("serve ended before it was ready: %v", err)
		case <-time.After(50 * time.Millisecond):
		}
		if i > 1200 {
			t.Fatal("serve was not ready within a minute")
		}
	}
}

func (s *servedIndex) ingest(t *testing.T) {
	t.Helper()
	if err := run(context.Background(), []string{"ingest", s.site, "--base-url", examples.BaseURL, "--index", s.idx}); err != nil {
		t.Fatal(err)
	}
}

// changeCalendar rewrites the start of classes on the example site's calendar page.
func (s *servedIndex) changeCalendar(t *testing.T) {
	t.Helper()
	p := filepath.Join(s.site, "academic-calendar", "index.html")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), oldStart) {
		t.Fatalf("the calendar page no longer says %q", oldStart)
	}
	if err := os.WriteFile(p, []byte(strings.ReplaceAll(string(b), oldStart, newStart)), 0o644); err != nil {
		t.Fatal(err)
	}
}

// call makes one request, with header name and value pairs, and returns the status and body.
func (s *servedIndex) call(method, path, key, body string, header ...string) (int, string, error) {
	req, err := http.NewRequest(method, s.base+path, strings.NewReader(body))
	if err != nil {
		return 0, "", err
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// version is the index version /readyz names.
func (s *servedIndex) version(t *testing.T) string {
	t.Helper()
	status, body, err := s.call(http.MethodGet, "/readyz", "", "")
	if err != nil || status != http.StatusOK {
		t.Fatalf("readyz: %d %s %v", status, body, err)
	}
	var r struct {
		IndexVersion string `json:"index_version"`
	}
	if err := json.Unmarshal([]byte(body), &r); err != nil || r.IndexVersion == "" {
		t.Fatalf("readyz names no index version: %s", body)
	}
	return r.IndexVersion
}

// answered is one streamed answer of the load.
type answered struct {
	status  int
	body    string
	err     error
	startAt int // the number of switches seen before the request started
}

// TestReloadUnderStreamingLoad re-ingests a changed page while streams run against serve: no request fails, and
// the answers switch to the page's new text once the watcher has loaded the new version.
func TestReloadUnderStreamingLoad(t *testing.T) {
	s := startServe(t, "--reload-interval", "50ms")
	before := s.version(t)

	var (
		mu       sync.Mutex
		results  []answered
		switched int // 1 once the test has seen /readyz name the new version
	)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i := range 4 {
		// Half the streams skip the response cache, so they are grounded each time; the others are answered
		// from it, whose keys must follow the version.
		var header []string
		if i%2 == 0 {
			header = []string{"Cache-Control", "no-cache"}
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				mu.Lock()
				seen := switched
				mu.Unlock()
				status, body, err := s.call(http.MethodPost, "/v1/chat/completions", testClientKey, reloadQuestion, header...)
				mu.Lock()
				results = append(results, answered{status, body, err, seen})
				mu.Unlock()
			}
		}()
	}
	count := func() int { mu.Lock(); defer mu.Unlock(); return len(results) }
	for count() < 20 {
		time.Sleep(10 * time.Millisecond)
	}
	s.changeCalendar(t)
	s.ingest(t) // while the load runs
	after := ""
	for i := 0; i < 1200; i++ {
		if v := s.version(t); v != before {
			after = v
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if after == "" {
		close(stop)
		wg.Wait()
		t.Fatal("serve did not switch to the re-ingested version within a minute")
	}
	mu.Lock()
	switched = 1
	n := len(results)
	mu.Unlock()
	for count() < n+20 {
		time.Sleep(10 * time.Millisecond)
	}
	close(stop)
	wg.Wait()

	var failed, oldText, newText, staleAfter int
	for _, r := range results {
		if r.err != nil || r.status != http.StatusOK || !strings.Contains(r.body, "data: [DONE]") || strings.Contains(r.body, `"error"`) {
			failed++
			if failed <= 3 {
				t.Errorf("request failed: %d %v %.300s", r.status, r.err, r.body)
			}
			continue
		}
		a := ssetest.Answer(t, r.body)
		switch {
		case strings.Contains(a, newStart):
			newText++
		case strings.Contains(a, oldStart):
			oldText++
			if r.startAt == 1 {
				staleAfter++
			}
		}
	}
	t.Logf("%d streams: %d failed, %d answered from the old version, %d from the new", len(results), failed, oldText, newText)
	if failed > 0 {
		t.Errorf("%d of %d streams failed during the reload", failed, len(results))
	}
	if oldText == 0 || newText == 0 {
		t.Errorf("answers must name the old start before the re-ingest and the new one after: old %d, new %d", oldText, newText)
	}
	if staleAfter > 0 {
		t.Errorf("%d streams started after the switch still answered from the old version", staleAfter)
	}
}

// TestReloadOnRequest checks the admin API and SIGHUP: without the watcher a re-ingest changes nothing until one
// of them asks, and the admin routes refuse client keys.
func TestReloadOnRequest(t *testing.T) {
	s := startServe(t, "--reload-interval", "0")
	before := s.version(t)

	for _, key := range []string{"", testClientKey, "adm-wrong-0123456789"} {
		status, body, err := s.call(http.MethodPost, "/admin/index/reload", key, "")
		if err != nil || status != http.StatusUnauthorized || !strings.Contains(body, `"invalid_api_key"`) {
			t.Errorf("reload with key %q: %d %s %v, want 401 invalid_api_key", key, status, body, err)
		}
	}
	status, body, err := s.call(http.MethodGet, "/admin/index", testAdminKey, "")
	if err != nil || status != http.StatusOK || !strings.Contains(body, `"version":"`+before+`"`) {
		t.Errorf("GET /admin/index: %d %s %v", status, body, err)
	}
	if status, body, _ := s.call(http.MethodGet, "/v1/models", testAdminKey, ""); status != http.StatusUnauthorized {
		t.Errorf("an admin key must not open /v1: %d %s", status, body)
	}

	s.changeCalendar(t)
	s.ingest(t)
	time.Sleep(200 * time.Millisecond)
	if v := s.version(t); v != before {
		t.Fatalf("with --reload-interval 0 the version changed without a request: %s -> %s", before, v)
	}
	status, body, err = s.call(http.MethodPost, "/admin/index/reload", testAdminKey, "")
	var res reloadResult
	if err != nil || status != http.StatusOK || json.Unmarshal([]byte(body), &res) != nil || !res.Switched || res.Previous != before {
		t.Fatalf("admin reload: %d %s %v", status, body, err)
	}
	if v := s.version(t); v != res.Version || v == before {
		t.Errorf("readyz names %s after the reload to %s", v, res.Version)
	}
	status, body, err = s.call(http.MethodPost, "/v1/chat/completions", testClientKey, reloadQuestion)
	if err != nil || status != http.StatusOK || !strings.Contains(ssetest.Answer(t, body), newStart) {
		t.Errorf("the answer after the reload does not name the new start: %d %v %.500s", status, err, body)
	}
	status, body, _ = s.call(http.MethodPost, "/admin/index/reload", testAdminKey, "")
	if status != http.StatusOK || !strings.Contains(body, `"switched":false`) {
		t.Errorf("a second reload must change nothing: %d %s", status, body)
	}

	// SIGHUP: change the page back, re-ingest, signal.
	p := filepath.Join(s.site, "academic-calendar", "index.html")
	b, _ := os.ReadFile(p)
	os.WriteFile(p, []byte(strings.ReplaceAll(string(b), newStart, oldStart)), 0o644)
	s.ingest(t)
	current := s.version(t)
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	for i := 0; s.version(t) == current; i++ {
		if i > 1200 {
			t.Fatal("SIGHUP did not switch the version within a minute")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestReloadWaitsForQdrant checks the order ingest leaves behind: CURRENT names a new version before Qdrant holds
// its collections. A reload then keeps the served version (its searches would fail), and succeeds once the
// backends are synced.
func TestReloadWaitsForQdrant(t *testing.T) {
	noBackendsEnv(t)
	_, url := qdranttest.NewServer(t)
	s := &servedIndex{}
	s.site, s.idx = exampleSite(t)
	captureStdout(t)
	ingest := func(args ...string) {
		t.Helper()
		if err := run(context.Background(), append([]string{"ingest", s.site, "--base-url", examples.BaseURL, "--index", s.idx}, args...)); err != nil {
			t.Fatal(err)
		}
	}
	ingest("--qdrant-url", url)
	rl, _ := testReloader(t, s.idx, "--qdrant-url", url)
	r := rl.live.Current()
	v1 := r.Index().Manifest.Version

	s.changeCalendar(t)
	ingest() // the local index only: Qdrant lags behind
	if _, err := rl.reload(context.Background(), "test"); !errors.Is(err, qdrant.ErrVersionMissing) {
		t.Fatalf("reload before the sync: err = %v, want ErrVersionMissing", err)
	}
	if got := rl.live.Current().Index().Manifest.Version; got != v1 {
		t.Fatalf("a failed reload replaced the served version: %s, want %s", got, v1)
	}
	if rl.retryAt.IsZero() {
		t.Error("a failed reload must schedule a retry")
	}
	ingest("--qdrant-url", url) // unchanged content: the index stays, the backends catch up
	res, err := rl.reload(context.Background(), "test")
	if err != nil || !res.Switched || res.Previous != v1 {
		t.Fatalf("reload after the sync: %+v, %v", res, err)
	}
	if !rl.retryAt.IsZero() {
		t.Error("a successful reload must clear the retry")
	}
}

// testReloader loads the index under idx as serve does with args, and returns the reloader a server would use
// (its reloads open versions strictly) with the parsed flags. The reloader is closed when the test ends.
func testReloader(t *testing.T, idx string, args ...string) (*reloader, serveFlags) {
	t.Helper()
	f, err := parseServeFlags(append([]string{"--index", idx}, args...))
	if err != nil {
		t.Fatal(err)
	}
	tok, err := tokenizer.New()
	if err != nil {
		t.Fatal(err)
	}
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	r, release, err := f.openVersion(context.Background(), nil, tok, logger, false)
	if err != nil {
		t.Fatal(err)
	}
	metrics, err := observability.New(observability.Config{})
	if err != nil {
		t.Fatal(err)
	}
	rl := &reloader{dir: idx, live: retrieval.NewLive(r, release), logger: logger, metrics: metrics, name: "lakeshore",
		open: func(ctx context.Context) (*retrieval.Retriever, func(), error) {
			return f.openVersion(ctx, nil, tok, logger, true)
		}}
	t.Cleanup(rl.live.Close)
	return rl, f
}
