// Package gatewaytest runs ragproxy's gateway for tests of the packages that plug into it: a server.Server on
// loopback in front of a fake upstream (openaitest), stopped when the test ends. The gateway's own tests have a
// harness of their own (package server cannot import this one).
package gatewaytest

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ragproxy/ragproxy/compat/openaitest"
	"github.com/ragproxy/ragproxy/server"
	"github.com/ragproxy/ragproxy/upstream"
)

// Harness is a running gateway and its fake upstream.
type Harness struct {
	// Base is the server's root URL (http://127.0.0.1:PORT); URL is its API, Base + "/v1".
	Base, URL string
	Fake      *openaitest.Server
}

// Start serves cfg in front of a fake upstream configured by fake until tb ends.
func Start(tb testing.TB, cfg server.Config, fake openaitest.Config) *Harness {
	tb.Helper()
	h := &Harness{Fake: openaitest.NewServer(fake)}
	tb.Cleanup(h.Fake.Close)
	client, err := upstream.New(upstream.Config{Backoff: time.Millisecond,
		Primary: upstream.Endpoint{BaseURL: h.Fake.URL(), APIKey: fake.APIKey, Model: "gpt-4o-mini"}})
	if err != nil {
		tb.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	h.Base = "http://" + ln.Addr().String()
	h.URL = h.Base + "/v1"
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- server.New(cfg, client).Serve(ctx, ln) }()
	tb.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			tb.Error("server did not stop")
		}
	})
	return h
}

// Post sends a JSON body to path (under /v1) with header pairs and returns the response with its body read.
func (h *Harness) Post(tb testing.TB, path, body string, header ...string) (*http.Response, string) {
	tb.Helper()
	req, err := http.NewRequest(http.MethodPost, h.URL+path, strings.NewReader(body))
	if err != nil {
		tb.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatal(err)
	}
	return resp, string(b)
}

// Call makes one request to the server at base (its root URL), with bearer key when not empty and header name
// and value pairs, and returns the status and body.
func Call(base, method, path, key, body string, header ...string) (int, string, error) {
	req, err := http.NewRequest(method, base+path, strings.NewReader(body))
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

// IndexVersion is the index version the /readyz of the server at base names; it fails tb when there is none.
func IndexVersion(tb testing.TB, base string) string {
	tb.Helper()
	status, body, err := Call(base, http.MethodGet, "/readyz", "", "")
	if err != nil || status != http.StatusOK {
		tb.Fatalf("readyz: %d %s %v", status, body, err)
	}
	var r struct {
		IndexVersion string `json:"index_version"`
	}
	if err := json.Unmarshal([]byte(body), &r); err != nil || r.IndexVersion == "" {
		tb.Fatalf("readyz names no index version: %s", body)
	}
	return r.IndexVersion
}
