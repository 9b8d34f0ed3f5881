package grounding

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ragproxy/ragproxy/compat"
	"github.com/ragproxy/ragproxy/compat/openaitest"
	"github.com/ragproxy/ragproxy/server"
)

// harness is the gateway with a Grounder in front of a fake upstream, served on loopback.
type harness struct {
	URL  string // base URL ending in /v1
	Fake *openaitest.Server
}

func newHarness(t testing.TB, cfg server.Config, fake openaitest.Config) *harness {
	t.Helper()
	h := &harness{Fake: openaitest.NewServer(fake)}
	t.Cleanup(h.Fake.Close)
	client, err := compat.NewClient(compat.ClientConfig{Backoff: time.Millisecond,
		Primary: compat.Upstream{BaseURL: h.Fake.URL(), APIKey: fake.APIKey, Model: "gpt-4o-mini"}})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h.URL = "http://" + ln.Addr().String() + "/v1"
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- server.New(cfg, client).Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Error("server did not stop")
		}
	})
	return h
}

// post sends a JSON body to path with header pairs and returns the response with its body read.
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

// replying is a fake upstream that answers every request with content.
func replying(content string) openaitest.Config {
	return openaitest.Config{Reply: func(*openaitest.Request) openaitest.Reply { return openaitest.Reply{Content: content} }}
}
