package admin

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ragproxy/ragproxy/cache"
	"github.com/ragproxy/ragproxy/compat/openaitest"
	"github.com/ragproxy/ragproxy/examples"
	"github.com/ragproxy/ragproxy/grounding"
	"github.com/ragproxy/ragproxy/ingest"
	"github.com/ragproxy/ragproxy/internal/gatewaytest"
	"github.com/ragproxy/ragproxy/internal/indextest"
	"github.com/ragproxy/ragproxy/internal/ssetest"
	"github.com/ragproxy/ragproxy/observability"
	"github.com/ragproxy/ragproxy/retrieval"
	"github.com/ragproxy/ragproxy/server"
	"github.com/ragproxy/ragproxy/tokenizer"
)

const (
	reloadQuestion = `{"model":"lakeshore","stream":true,"messages":[{"role":"user","content":"when do fall classes start 2024"}]}`
	oldStart       = indextest.CalendarStart
	newStart       = indextest.ChangedCalendarStart
	testAdminKey   = "adm-0123456789abcdef"
	testClientKey  = "sk-client-0123456789"
)

// servedIndex is a gateway answering offline from the example site's index, with the admin API, started by
// startServe.
type servedIndex struct {
	site, idx, base string
	adm             *Admin
	// signals stands for SIGHUP; reloaded receives the version of every switch, when it is logged.
	signals  chan os.Signal
	reloaded chan string
}

// startServe ingests the example site and serves it offline until the test ends, with the admin key
// testAdminKey and the watcher polling CURRENT every interval (0: no watcher).
func startServe(t *testing.T, interval time.Duration) *servedIndex {
	t.Helper()
	return startServeAdmin(t, testAdminKey, interval)
}

// startServeAdmin is startServe with the admin key adminKey (none when empty).
func startServeAdmin(t *testing.T, adminKey string, interval time.Duration) *servedIndex {
	t.Helper()
	s := &servedIndex{site: indextest.ExampleSite(t), idx: filepath.Join(t.TempDir(), "lakeshore"),
		signals: make(chan os.Signal, 1), reloaded: make(chan string, 16)}
	s.ingest(t)
	tok, err := tokenizer.New()
	if err != nil {
		t.Fatal(err)
	}
	open := func(ctx context.Context) (*retrieval.Retriever, func(), error) {
		r, err := retrieval.OpenGently(s.idx, nil, tok, retrieval.DefaultConfig())
		if err != nil {
			return nil, nil, err
		}
		return r, func() { r.Index().Close() }, nil
	}
	r, release, err := open(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	live := retrieval.NewLive(r, release)
	t.Cleanup(live.Close)
	metrics, err := observability.New(observability.Config{})
	if err != nil {
		t.Fatal(err)
	}
	s.adm, err = New(Config{Dir: s.idx, Live: live, Open: open, Name: "lakeshore", ReloadInterval: interval, Metrics: metrics,
		Signals: s.signals, ParseIngest: parseTestIngest, Jobs: JobPolicy{AllowPrivate: true, MirrorRoot: s.site}, Logger: slog.New(reloadLog{s.reloaded})})
	if err != nil {
		t.Fatal(err)
	}
	s.run(t)
	lru, err := cache.NewLRU(cache.LRUConfig{})
	if err != nil {
		t.Fatal(err)
	}
	var adminKeys []string
	if adminKey != "" {
		adminKeys = []string{adminKey}
	}
	g := &grounding.Grounder{Retriever: live, Tokenizer: tok, SiteName: "Lakeshore Polytechnic", Offline: true, Model: "lakeshore"}
	h := gatewaytest.Start(t, server.Config{APIKeys: []string{testClientKey}, AdminKeys: adminKeys, Admin: s.adm.Routes(),
		Grounder: g, Models: []server.ModelAlias{{ID: "lakeshore", Upstream: "gpt-4o-mini"}}, Cache: lru, CacheTTL: time.Hour,
		Logger: slog.New(slog.DiscardHandler)}, openaitest.Config{})
	s.base = h.Base
	return s
}

// run runs the admin's background work until the test ends (after the gateway, whose cleanup comes later).
func (s *servedIndex) run(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan struct{})
	go func() { defer close(ran); s.adm.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-ran })
}

// reloadLog is a slog handler that sends the version of every "index reloaded" record to its channel (dropped
// when the channel is full) and discards the rest.
type reloadLog struct{ versions chan<- string }

func (h reloadLog) Enabled(context.Context, slog.Level) bool { return true }
func (h reloadLog) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h reloadLog) WithGroup(string) slog.Handler            { return h }
func (h reloadLog) Handle(_ context.Context, r slog.Record) error {
	if r.Message != "index reloaded" {
		return nil
	}
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "version" {
			select {
			case h.versions <- a.Value.String():
			default:
			}
			return false
		}
		return true
	})
	return nil
}

// waitReload waits for the next switch of versions and returns the new version.
func (s *servedIndex) waitReload(t *testing.T) string {
	t.Helper()
	select {
	case v := <-s.reloaded:
		return v
	case <-time.After(time.Minute):
		t.Fatal("no switch of versions within a minute")
		return ""
	}
}

// parseTestIngest reads the options of `ragproxy ingest` that the tests' jobs give.
func parseTestIngest(args []string, out io.Writer) (*Ingest, error) {
	fs := flag.NewFlagSet("ingest", flag.ContinueOnError)
	fs.SetOutput(out)
	var cfg ingest.Config
	fs.StringVar(&cfg.IndexDir, "index", "", "")
	fs.StringVar(&cfg.BaseURL, "base-url", "", "")
	fs.BoolVar(&cfg.Crawl.AllowPrivate, "allow-private", false, "")
	fs.BoolVar(&cfg.Crawl.NoSitemaps, "no-sitemaps", false, "")
	fs.DurationVar(&cfg.Crawl.Delay, "delay", 0, "")
	fs.IntVar(&cfg.Crawl.MaxPages, "max-pages", 0, "")
	if len(args) == 0 {
		return nil, errors.New("ingest: no SOURCE")
	}
	if err := fs.Parse(args[1:]); err != nil {
		return nil, err
	}
	cfg.Source = args[0]
	if cfg.Crawl.AllowPrivate {
		cfg.Crawl.HTTPClient = &http.Client{Timeout: 30 * time.Second}
	}
	return &Ingest{Config: cfg}, nil
}

func (s *servedIndex) ingest(t *testing.T) {
	t.Helper()
	indextest.Build(t, s.site, examples.BaseURL, s.idx)
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
	s := startServe(t, 50*time.Millisecond)
	before := s.version(t)

	var (
		mu       sync.Mutex
		grew     = sync.NewCond(&mu) // signalled with every answer
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
				grew.Broadcast()
				mu.Unlock()
			}
		}()
	}
	// waitAnswers waits until there are n answers.
	waitAnswers := func(n int) {
		mu.Lock()
		defer mu.Unlock()
		for len(results) < n {
			grew.Wait()
		}
	}
	waitAnswers(20)
	s.changeCalendar(t)
	s.ingest(t) // while the load runs
	var after string
	select {
	case after = <-s.reloaded:
	case <-time.After(time.Minute):
		close(stop)
		wg.Wait()
		t.Fatal("the watcher did not switch to the re-ingested version within a minute")
	}
	if v := s.version(t); v != after || v == before {
		t.Errorf("readyz names %s after the watcher switched from %s to %s", v, before, after)
	}
	mu.Lock()
	switched = 1
	n := len(results)
	mu.Unlock()
	waitAnswers(n + 20)
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
	s := startServe(t, 0)
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
	// Without a watcher nothing polls CURRENT: the version stays until a reload is asked for.
	if v := s.version(t); v != before {
		t.Fatalf("with ReloadInterval 0 the version changed without a request: %s -> %s", before, v)
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

	// A signal (serve relays SIGHUP): change the page back, re-ingest, signal.
	p := filepath.Join(s.site, "academic-calendar", "index.html")
	b, _ := os.ReadFile(p)
	os.WriteFile(p, []byte(strings.ReplaceAll(string(b), newStart, oldStart)), 0o644)
	s.ingest(t)
	current := s.version(t)
	for len(s.reloaded) > 0 { // the switches above, logged before their calls returned
		<-s.reloaded
	}
	s.signals <- syscall.SIGHUP
	if v := s.waitReload(t); v == current || s.version(t) != v {
		t.Errorf("the signal switched from %s to %s, and readyz names %s", current, v, s.version(t))
	}
}

// TestReloadRetries checks a version that fails to load: the served version stays, a retry is scheduled after a
// wait that doubles with each failure, and a load that succeeds clears it.
func TestReloadRetries(t *testing.T) {
	s := startServe(t, 0)
	before := s.version(t)
	rl := s.adm.rl
	open := rl.open
	errNotSynced := errors.New("the version's backends are not synced")
	rl.open = func(context.Context) (*retrieval.Retriever, func(), error) { return nil, nil, errNotSynced }

	s.changeCalendar(t)
	s.ingest(t)
	if _, err := rl.reload(context.Background(), "test"); !errors.Is(err, errNotSynced) {
		t.Fatalf("reload that cannot open the version: err = %v, want %v", err, errNotSynced)
	}
	if v := s.version(t); v != before {
		t.Fatalf("a failed reload replaced the served version: %s, want %s", v, before)
	}
	if rl.retryAt.IsZero() || rl.backoff != minReloadRetry {
		t.Errorf("a failed reload must schedule a retry after %s: at %v, backoff %s", minReloadRetry, rl.retryAt, rl.backoff)
	}
	if _, err := rl.reload(context.Background(), "test"); err == nil || rl.backoff != 2*minReloadRetry {
		t.Errorf("a second failure must double the wait: %v, backoff %s", err, rl.backoff)
	}
	rl.open = open
	res, err := rl.reload(context.Background(), "test")
	if err != nil || !res.Switched || res.Previous != before {
		t.Fatalf("reload once the version opens: %+v, %v", res, err)
	}
	if !rl.retryAt.IsZero() || rl.backoff != 0 {
		t.Error("a successful reload must clear the retry")
	}
}
