package compat_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/ragproxy/ragproxy/compat"
	"github.com/ragproxy/ragproxy/compat/openaitest"
)

// TestStreamBounds checks that a sick upstream stream ends with an error instead of holding the request: an event
// that never ends (which would otherwise grow memory without bound) and a stream that stalls after its first chunks.
func TestStreamBounds(t *testing.T) {
	tests := []struct {
		name       string
		fault      openaitest.Fault
		wantStatus int
	}{
		{"endless event", openaitest.Fault{EndlessEvent: true}, http.StatusBadGateway},
		{"stalled stream", openaitest.Fault{StallAfter: 2}, http.StatusGatewayTimeout},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := openaitest.NewServer(openaitest.Config{})
			defer fake.Close()
			fake.Fail(tt.fault)
			c, err := compat.NewClient(compat.ClientConfig{Primary: compat.Upstream{BaseURL: fake.URL(), Model: "gpt-4o-mini"},
				MaxEventBytes: 256 << 10, StreamIdleTimeout: 200 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			req, err := compat.DecodeChatRequest([]byte(`{"stream":true,"messages":[{"role":"user","content":"one two three four"}]}`))
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			s, _, err := c.Stream(ctx, &compat.Call{Request: req})
			if err != nil {
				t.Fatalf("the first chunk should arrive: %v", err)
			}
			n := 0
			for s.Next() {
				n++
			}
			s.Close()
			var ae *compat.APIError
			if !errors.As(s.Err(), &ae) || ae.Status != tt.wantStatus {
				t.Fatalf("after %d chunks the stream ended with %v, want a %d error", n, s.Err(), tt.wantStatus)
			}
			if ctx.Err() != nil {
				t.Fatal("the stream ended only because the test gave up")
			}
			waitCanceled(t, fake)
		})
	}
}

// waitCanceled waits until the fake saw its last request's connection go away.
func waitCanceled(t *testing.T, fake *openaitest.Server) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		reqs := fake.Requests()
		if len(reqs) > 0 && reqs[len(reqs)-1].Canceled {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Error("the upstream call was not cancelled")
}
