package server

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ragproxy/ragproxy/compat/openaitest"
	"github.com/ragproxy/ragproxy/upstream"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

// harness is a proxy in front of one or two fake upstreams.
type harness struct {
	URL      string // proxy base URL ending in /v1
	Fake     *openaitest.Server
	Fallback *openaitest.Server
	srv      *Server
	stop     context.CancelFunc
	done     chan error
}

type harnessOpts struct {
	cfg      Config
	fake     openaitest.Config
	fallback *openaitest.Config
	client   upstream.Config
}

func newHarness(t testing.TB, o harnessOpts) *harness {
	t.Helper()
	h := &harness{Fake: openaitest.NewServer(o.fake)}
	t.Cleanup(h.Fake.Close)
	cc := o.client
	cc.Primary = upstream.Endpoint{BaseURL: h.Fake.URL(), APIKey: o.fake.APIKey, Model: "gpt-4o-mini"}
	if o.fallback != nil {
		h.Fallback = openaitest.NewServer(*o.fallback)
		t.Cleanup(h.Fallback.Close)
		cc.Fallback = upstream.Endpoint{BaseURL: h.Fallback.URL(), APIKey: o.fallback.APIKey, Model: "llama3"}
	}
	if cc.Backoff == 0 {
		cc.Backoff = time.Millisecond
	}
	client, err := upstream.New(cc)
	if err != nil {
		t.Fatal(err)
	}
	h.srv = New(o.cfg, client)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h.URL = "http://" + ln.Addr().String() + "/v1"
	ctx, cancel := context.WithCancel(context.Background())
	h.stop, h.done = cancel, make(chan error, 1)
	go func() { h.done <- h.srv.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-h.done:
		case <-time.After(10 * time.Second):
			t.Error("server did not stop")
		}
	})
	return h
}

// post sends body to path and returns the response with its body read.
func (h *harness) post(t testing.TB, path, body string, header ...string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, h.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

func (h *harness) get(t testing.TB, path string) (*http.Response, string) {
	t.Helper()
	resp, err := http.Get(h.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

var (
	reqIDPattern  = regexp.MustCompile(`req_[0-9a-f]{32}`)
	cmplIDPattern = regexp.MustCompile(`chatcmpl-[0-9a-f]{32}`)
	createdTime   = regexp.MustCompile(`"created":\d+`)
)

// normalize replaces the values that change per run.
func normalize(s string) string {
	s = reqIDPattern.ReplaceAllString(s, "req_ID")
	s = cmplIDPattern.ReplaceAllString(s, "chatcmpl-ID")
	return createdTime.ReplaceAllString(s, `"created":0`)
}

// golden compares got with testdata/name, rewriting it under -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden file (run with -update to create): %v", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", name, diff)
	}
}

// readFrames reads SSE frames until EOF, n frames (n > 0), or error.
func readFrames(r io.Reader, n int) ([]string, error) {
	sc := bufio.NewScanner(r)
	var frames []string
	var cur []string
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			if len(cur) > 0 {
				frames = append(frames, strings.Join(cur, "\n"))
				cur = nil
				if n > 0 && len(frames) == n {
					return frames, nil
				}
			}
			continue
		}
		cur = append(cur, line)
	}
	if err := sc.Err(); err != nil && !errors.Is(err, io.EOF) {
		return frames, err
	}
	return frames, nil
}

func waitCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func newStreamRequest(ctx context.Context, base, body string) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/chat/completions", strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	return req, nil
}

// httpClientNoPool closes its connection when the response body is closed
// early, like a browser tab going away.
func httpClientNoPool() *http.Client {
	return &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
}

// tracked counts the requests a drain would cut off: those not yet finished.
func (s *Server) tracked() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.inflight)
}
