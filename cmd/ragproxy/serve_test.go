package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ragproxy/ragproxy/examples"
	"github.com/ragproxy/ragproxy/internal/gatewaytest"
	"github.com/ragproxy/ragproxy/internal/indextest"
	"github.com/ragproxy/ragproxy/retrieval/qdrant"
	"github.com/ragproxy/ragproxy/retrieval/qdrant/qdranttest"
	"github.com/ragproxy/ragproxy/serve"
	"github.com/ragproxy/ragproxy/tokenizer"
)

const (
	reloadQuestion = `{"model":"lakeshore","stream":true,"messages":[{"role":"user","content":"when do fall classes start 2024"}]}`
	oldStart       = indextest.CalendarStart
	newStart       = indextest.ChangedCalendarStart
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
	s.serveOn(t, args...)
	return s
}

// serveOn serves s's index with the client key testClientKey until the returned stop is called (at the latest
// when the test ends), and sets s.base to it.
func (s *servedIndex) serveOn(t *testing.T, args ...string) (stop func()) {
	t.Helper()
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
		done <- run(ctx, append([]string{"serve", "--index", s.idx, "--listen", addr, "--api-keys", testClientKey,
			"--log-level", "error"}, args...))
	}()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
				t.Errorf("serve: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	for i := 0; ; i++ {
		if r, err := http.Get(s.base + "/readyz"); err == nil {
			r.Body.Close()
			if r.StatusCode == http.StatusOK {
				return stop
			}
		}
		select {
		case err := <-done:
			done <- err // for stop
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
	indextest.ChangeCalendar(t, s.site)
}

// call makes one request, with header name and value pairs, and returns the status and body.
func (s *servedIndex) call(method, path, key, body string, header ...string) (int, string, error) {
	return gatewaytest.Call(s.base, method, path, key, body, header...)
}

// version is the index version /readyz names.
func (s *servedIndex) version(t *testing.T) string {
	t.Helper()
	return gatewaytest.IndexVersion(t, s.base)
}

// stderrLines returns the lines holding match that are written to os.Stderr from now until the test ends (at
// most 16 unread; later ones are dropped). Call it before starting what writes them: it ends after them.
func stderrLines(t *testing.T, match string) <-chan string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	old := os.Stderr
	os.Stderr = w
	t.Cleanup(func() { os.Stderr = old; w.Close() })
	lines := make(chan string, 16)
	go func() { // ends when w is closed
		defer r.Close()
		sc := bufio.NewScanner(r)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if strings.Contains(sc.Text(), match) {
				select {
				case lines <- sc.Text():
				default:
				}
			}
		}
	}()
	return lines
}

// TestServeReloadsOnSIGHUP checks serve's wiring of the admin API: a re-ingest changes nothing without the
// watcher, and SIGHUP switches to it.
func TestServeReloadsOnSIGHUP(t *testing.T) {
	reloads := stderrLines(t, `"msg":"index reloaded"`)
	s := startServe(t, "--reload-interval", "0", "--log-level", "info")
	before := s.version(t)
	s.changeCalendar(t)
	s.ingest(t)
	if v := s.version(t); v != before {
		t.Fatalf("with --reload-interval 0 the version changed without a request: %s -> %s", before, v)
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	select {
	case line := <-reloads:
		if !strings.Contains(line, `"reason":"SIGHUP"`) {
			t.Errorf("the reload after SIGHUP: %s", line)
		}
	case <-time.After(time.Minute):
		t.Fatal("SIGHUP did not switch the version within a minute")
	}
	if v := s.version(t); v == before {
		t.Errorf("readyz names %s after the SIGHUP reload", v)
	}
	status, body, err := s.call(http.MethodGet, "/admin/versions", testAdminKey, "")
	if err != nil || status != http.StatusOK || !strings.Contains(body, `"served":"`+s.version(t)+`"`) {
		t.Errorf("GET /admin/versions: %d %s %v", status, body, err)
	}
}

// TestIngestJobArgs checks that the admin API's jobs parse their options as `ragproxy ingest` does.
func TestIngestJobArgs(t *testing.T) {
	noBackendsEnv(t)
	site, idx := exampleSite(t)
	in, err := ingestJob([]string{site, "--base-url", examples.BaseURL, "--max-pages", "7", "--index", idx}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c := in.Config; c.Source != site || c.BaseURL != examples.BaseURL || c.Crawl.MaxPages != 7 || c.IndexDir != idx ||
		c.Version != version || in.Sync != nil {
		t.Errorf("job without backends: %+v, sync %v", c, in.Sync != nil)
	}
	if in, err := ingestJob([]string{site, "--base-url", examples.BaseURL, "--qdrant-url", "http://127.0.0.1:1", "--index", idx}, io.Discard); err != nil || in.Sync == nil {
		t.Errorf("a job with --qdrant-url must sync it: %v", err)
	}
	for _, bad := range [][]string{{site, "--max-pages", "many"}, {site, "--no-such-flag"}} {
		if _, err := ingestJob(append(bad, "--index", idx), io.Discard); err == nil {
			t.Errorf("%q: want an error", bad)
		}
	}
}

// TestOpenVersionWaitsForQdrant checks the order ingest leaves behind: CURRENT names a new version before Qdrant
// holds its collections. A reload's open then refuses the version (its searches would fail), and opens it once
// the backends are synced.
func TestOpenVersionWaitsForQdrant(t *testing.T) {
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
	f, err := parseServeFlags([]string{"--index", s.idx, "--qdrant-url", url})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := tokenizer.New()
	if err != nil {
		t.Fatal(err)
	}
	logger := slog.New(slog.DiscardHandler)
	r, release, err := serve.OpenVersion(context.Background(), f.cfg, tok, logger, false)
	if err != nil {
		t.Fatal(err)
	}
	release()
	v1 := r.Index().Manifest.Version

	s.changeCalendar(t)
	ingest() // the local index only: Qdrant lags behind
	if _, _, err := serve.OpenVersion(context.Background(), f.cfg, tok, logger, true); !errors.Is(err, qdrant.ErrVersionMissing) {
		t.Fatalf("reload before the sync: err = %v, want ErrVersionMissing", err)
	}
	ingest("--qdrant-url", url) // unchanged content: the index stays, the backends catch up
	r, release, err = serve.OpenVersion(context.Background(), f.cfg, tok, logger, true)
	if err != nil {
		t.Fatalf("reload after the sync: %v", err)
	}
	defer release()
	if v := r.Index().Manifest.Version; v == v1 {
		t.Errorf("the reload opened version %s, the one before the re-ingest", v)
	}
}
