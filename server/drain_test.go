package server

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/ragproxy/ragproxy/compat/openaitest"
)

// TestDrain cancels Serve's context while a stream is in flight: the stream
// must finish whole, /readyz must not be served any more, and Serve must
// return.
func TestDrain(t *testing.T) {
	h := newHarness(t, harnessOpts{
		cfg:  Config{DrainTimeout: 10 * time.Second},
		fake: openaitest.Config{ChunkDelay: 30 * time.Millisecond},
	})
	req, _ := newStreamRequest(context.Background(), h.URL, `{"stream":true,"messages":[{"role":"user","content":"one two three four five"}]}`)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	first, err := readFrames(resp.Body, 1)
	if err != nil || len(first) != 1 {
		t.Fatalf("first frame: %v %v", first, err)
	}
	h.stop() // SIGTERM
	rest, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("stream cut during drain: %v", err)
	}
	if !strings.HasSuffix(string(rest), "data: [DONE]\n\n") {
		t.Errorf("stream did not finish during drain:\n%s", rest)
	}
	waitServe(t, h, 5*time.Second, "Serve did not return after the drain")
}

// TestDrainTimeoutCutsOff checks a stream that outlives the drain timeout
// is ended with an error frame and its upstream request cancelled.
func TestDrainTimeoutCutsOff(t *testing.T) {
	h := newHarness(t, harnessOpts{
		cfg: Config{DrainTimeout: 100 * time.Millisecond, Heartbeat: 20 * time.Millisecond},
		fake: openaitest.Config{ChunkDelay: 50 * time.Millisecond, Reply: func(*openaitest.Request) openaitest.Reply {
			return openaitest.Reply{Content: strings.Repeat("w ", 500)}
		}},
	})
	req, _ := newStreamRequest(context.Background(), h.URL, `{"stream":true,"messages":[{"role":"user","content":"x"}]}`)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if _, err := readFrames(resp.Body, 1); err != nil {
		t.Fatal(err)
	}
	h.stop()
	rest, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(rest), `"code":"unavailable"`) || strings.Contains(string(rest), "[DONE]") {
		t.Errorf("want an error frame and no [DONE], got tail %q", tail(string(rest), 300))
	}
	rec, err := h.Fake.Wait(waitCtx(t), 0)
	if err != nil {
		t.Fatal(err)
	}
	if !rec.Canceled {
		t.Error("upstream request not cancelled at cut-off")
	}
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[len(s)-n:]
}

// TestDrainDoesNotWaitForIdleConnections opens a connection that never sends a request (browsers and HTTP
// clients open such connections ahead of need) next to a kept-alive one: the drain must close both and Serve
// return at once, not wait out the drain timeout as if a request were in flight.
func TestDrainDoesNotWaitForIdleConnections(t *testing.T) {
	h := newHarness(t, harnessOpts{cfg: Config{DrainTimeout: time.Minute}})
	if resp, _ := h.get(t, "/models"); resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /models: %d", resp.StatusCode)
	}
	u, err := url.Parse(h.URL)
	if err != nil {
		t.Fatal(err)
	}
	open := h.srv.app.Server().GetOpenConnectionsCount() // the kept-alive connection
	idle, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	if !waitFor(waitCtx(t), func() bool { return h.srv.app.Server().GetOpenConnectionsCount() > open }) {
		t.Fatal("the server never accepted the idle connection")
	}
	h.stop()
	waitServe(t, h, 15*time.Second, "Serve still draining a connection that never sent a request")
}

// waitServe waits for the harness's Serve to return nil, failing with stuck after limit.
func waitServe(t *testing.T, h *harness, limit time.Duration, stuck string) {
	t.Helper()
	select {
	case err := <-h.done:
		if err != nil {
			t.Errorf("Serve returned %v", err)
		}
	case <-time.After(limit):
		t.Fatal(stuck)
	}
	h.done <- nil // for the cleanup
}
