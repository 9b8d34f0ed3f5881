package upstream_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/ragproxy/ragproxy/compat"
	"github.com/ragproxy/ragproxy/compat/openaitest"
	"github.com/ragproxy/ragproxy/upstream"
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
			c, err := upstream.New(upstream.Config{Primary: upstream.Endpoint{BaseURL: fake.URL(), Model: "gpt-4o-mini"},
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
			s, _, err := c.Stream(ctx, &upstream.Call{Request: req})
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

// waitCanceled checks that the fake saw its last request's connection go away: it waits until the fake is done
// with the request, which a stalled or endless stream is only once its caller left.
func waitCanceled(t *testing.T, fake *openaitest.Server) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	n := len(fake.Requests())
	if n == 0 {
		t.Fatal("the upstream got no request")
	}
	req, err := fake.Wait(ctx, n-1)
	if err != nil {
		t.Fatalf("the upstream call was not cancelled: %v", err)
	}
	if !req.Canceled {
		t.Error("the upstream call was answered to its end, not cancelled")
	}
}

// TestSuccessThatIsNot checks that a 200 which carries no answer (an error body, no choices, a first stream event
// that is no chunk) fails the attempt, so the fallback answers instead of the client getting it as a success.
func TestSuccessThatIsNot(t *testing.T) {
	tests := []struct {
		name   string
		stream bool
		fault  openaitest.Fault
	}{
		{"error body with 200", false, openaitest.Fault{Status: http.StatusOK, Body: `{"error":{"message":"overloaded","type":"server_error"}}`}},
		{"no choices", false, openaitest.Fault{Status: http.StatusOK, Body: `{"id":"x","object":"chat.completion","choices":[]}`}},
		{"not JSON", false, openaitest.Fault{Status: http.StatusOK, Body: `<html>gateway</html>`}},
		{"malformed first chunk", true, openaitest.Fault{Status: http.StatusOK, Body: "data: {not json\n\n", ContentType: "text/event-stream"}},
		{"first chunk not an object", true, openaitest.Fault{Status: http.StatusOK, Body: "data:  [1, 2]\n\n", ContentType: "text/event-stream"}},
		{"blank first chunk", true, openaitest.Fault{Status: http.StatusOK, Body: "data:  \n\n", ContentType: "text/event-stream"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			primary := openaitest.NewServer(openaitest.Config{})
			defer primary.Close()
			fallback := openaitest.NewServer(openaitest.Config{Models: []string{"llama3"}})
			defer fallback.Close()
			primary.FailAlways(&tt.fault)
			c, err := upstream.New(upstream.Config{Backoff: time.Millisecond,
				Primary:  upstream.Endpoint{BaseURL: primary.URL(), Model: "gpt-4o-mini"},
				Fallback: upstream.Endpoint{BaseURL: fallback.URL(), Model: "llama3"}})
			if err != nil {
				t.Fatal(err)
			}
			body := `{"stream":` + map[bool]string{true: "true", false: "false"}[tt.stream] + `,"messages":[{"role":"user","content":"hi there"}]}`
			req, err := compat.DecodeChatRequest([]byte(body))
			if err != nil {
				t.Fatal(err)
			}
			var served upstream.Served
			if tt.stream {
				var s *upstream.Stream
				s, served, err = c.Stream(context.Background(), &upstream.Call{Request: req})
				if err == nil {
					for s.Next() {
					}
					err = s.Err()
					s.Close()
				}
			} else {
				_, served, err = c.Complete(context.Background(), &upstream.Call{Request: req})
			}
			if err != nil || served.Upstream != "fallback" || len(served.Attempts) < 2 {
				t.Errorf("err %v, served by %q after %d attempts; want the fallback's answer", err, served.Upstream, len(served.Attempts))
			}
		})
	}
}
