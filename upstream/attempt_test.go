package upstream_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/ragproxy/ragproxy/compat"
	"github.com/ragproxy/ragproxy/compat/openaitest"
	"github.com/ragproxy/ragproxy/upstream"
)

// TestServedAttempts checks that the client reports every attempt it made,
// on success and on error, with the upstream it went to and its outcome.
func TestServedAttempts(t *testing.T) {
	const (
		primary  = "primary"
		fallback = "fallback"
	)
	ok := func(name string, fb bool) upstream.Attempt {
		return upstream.Attempt{Upstream: name, Fallback: fb, Outcome: upstream.OutcomeSuccess}
	}
	failed := func(name string, fb bool, o upstream.Outcome, errType string) upstream.Attempt {
		return upstream.Attempt{Upstream: name, Fallback: fb, Outcome: o, ErrorType: errType}
	}
	tests := []struct {
		name         string
		cfg          upstream.Config
		faults       []openaitest.Fault
		fbFaults     []openaitest.Fault
		wantUpstream string
		want         []upstream.Attempt
		wantFailover bool
	}{
		{name: "primary answers", wantUpstream: primary, want: []upstream.Attempt{ok(primary, false)}},
		{name: "retry on the primary", faults: []openaitest.Fault{{Status: 503}}, wantUpstream: primary,
			want: []upstream.Attempt{failed(primary, false, upstream.OutcomeError, "503"), ok(primary, false)}},
		{name: "429 then fallback", cfg: upstream.Config{Retries: -1}, faults: []openaitest.Fault{{Status: 429}},
			wantUpstream: fallback, wantFailover: true,
			want: []upstream.Attempt{failed(primary, false, upstream.OutcomeRateLimited, "429"), ok(fallback, true)}},
		{name: "a timeout is not retried on the same upstream", cfg: upstream.Config{FirstByteTimeout: 100 * time.Millisecond},
			faults: []openaitest.Fault{{Hang: true}}, wantUpstream: fallback, wantFailover: true,
			want: []upstream.Attempt{failed(primary, false, upstream.OutcomeTimeout, "timeout"), ok(fallback, true)}},
		{name: "first-byte timeout then fallback", cfg: upstream.Config{Retries: -1, FirstByteTimeout: 100 * time.Millisecond},
			faults: []openaitest.Fault{{Hang: true}}, wantUpstream: fallback, wantFailover: true,
			want: []upstream.Attempt{failed(primary, false, upstream.OutcomeTimeout, "timeout"), ok(fallback, true)}},
		{name: "everything fails", faults: []openaitest.Fault{{Drop: true}, {Status: 500}},
			fbFaults: []openaitest.Fault{{Status: 502}, {Status: 429}}, wantFailover: true,
			want: []upstream.Attempt{
				failed(primary, false, upstream.OutcomeError, "connection"),
				failed(primary, false, upstream.OutcomeError, "500"),
				failed(fallback, true, upstream.OutcomeError, "502"),
				failed(fallback, true, upstream.OutcomeRateLimited, "429"),
			}},
		{name: "retry waits for a short Retry-After", faults: []openaitest.Fault{{Status: 429, RetryAfter: "1"}},
			wantUpstream: primary,
			want:         []upstream.Attempt{failed(primary, false, upstream.OutcomeRateLimited, "429"), ok(primary, false)}},
		{name: "a long Retry-After goes to the fallback at once", faults: []openaitest.Fault{{Status: 429, RetryAfter: "120"}},
			wantUpstream: fallback, wantFailover: true,
			want: []upstream.Attempt{failed(primary, false, upstream.OutcomeRateLimited, "429"), ok(fallback, true)}},
		{name: "400 is final", faults: []openaitest.Fault{{Status: 400}},
			want: []upstream.Attempt{failed(primary, false, upstream.OutcomeError, "400")}},
	}
	for _, tt := range tests {
		for _, stream := range []bool{false, true} {
			name := tt.name + "/complete"
			if stream {
				name = tt.name + "/stream"
			}
			t.Run(name, func(t *testing.T) {
				c, p, f := newFailoverClient(t, tt.cfg)
				p.Fail(tt.faults...)
				f.Fail(tt.fbFaults...)
				served, err := send(context.Background(), t, c, stream)
				last := tt.want[len(tt.want)-1]
				if (err == nil) != (last.Outcome == upstream.OutcomeSuccess) {
					t.Fatalf("error = %v, want last outcome %s", err, last.Outcome)
				}
				checkServed(t, served, tt.wantUpstream, tt.want, tt.wantFailover)
			})
		}
	}
}

// TestServedAttemptCanceled checks an attempt the caller abandons is
// reported as canceled, not as an upstream failure.
func TestServedAttemptCanceled(t *testing.T) {
	c, p, _ := newFailoverClient(t, upstream.Config{})
	p.Fail(openaitest.Fault{Hang: true})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		// Cancel once the upstream holds the request; the goroutine ends with ctx.
		if p.Received(ctx, 1) == nil {
			cancel()
		}
	}()
	served, err := send(ctx, t, c, false)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error = %v, want context.Canceled", err)
	}
	want := []upstream.Attempt{{Upstream: "primary", Outcome: upstream.OutcomeCanceled, ErrorType: "canceled"}}
	checkServed(t, served, "", want, false)
}

func newFailoverClient(t *testing.T, cfg upstream.Config) (*upstream.Client, *openaitest.Server, *openaitest.Server) {
	t.Helper()
	p := openaitest.NewServer(openaitest.Config{})
	t.Cleanup(p.Close)
	f := openaitest.NewServer(openaitest.Config{Models: []string{"llama3"}})
	t.Cleanup(f.Close)
	cfg.Primary = upstream.Endpoint{BaseURL: p.URL(), Model: "gpt-4o-mini"}
	cfg.Fallback = upstream.Endpoint{BaseURL: f.URL(), Model: "llama3"}
	cfg.Backoff = time.Millisecond
	c, err := upstream.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c, p, f
}

// send makes one call and, for a stream, reads it to the end.
func send(ctx context.Context, t *testing.T, c *upstream.Client, stream bool) (upstream.Served, error) {
	t.Helper()
	body := fmt.Sprintf(`{"model":"gpt-4o-mini","stream":%t,"messages":[{"role":"user","content":"hello"}]}`, stream)
	req, err := compat.DecodeChatRequest([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	call := &upstream.Call{Request: req}
	if !stream {
		_, served, err := c.Complete(ctx, call)
		return served, err
	}
	s, served, err := c.Stream(ctx, call)
	if err != nil {
		return served, err
	}
	defer s.Close()
	for s.Next() {
	}
	if err := s.Err(); err != nil {
		t.Fatalf("stream after the first event: %v", err)
	}
	return served, nil
}

func checkServed(t *testing.T, served upstream.Served, wantUpstream string, want []upstream.Attempt, wantFailover bool) {
	t.Helper()
	if served.Upstream != wantUpstream {
		t.Errorf("Served.Upstream = %q, want %q", served.Upstream, wantUpstream)
	}
	if diff := cmp.Diff(want, served.Attempts, cmpopts.IgnoreFields(upstream.Attempt{}, "Err", "Duration")); diff != "" {
		t.Errorf("attempts (-want +got):\n%s", diff)
	}
	for i, a := range served.Attempts {
		if (a.Err == nil) != (a.Outcome == upstream.OutcomeSuccess) {
			t.Errorf("attempt %d: outcome %s with error %v", i, a.Outcome, a.Err)
		}
		if a.Duration <= 0 {
			t.Errorf("attempt %d: duration %v, want > 0", i, a.Duration)
		}
	}
	if got := served.Failover(); got != wantFailover {
		t.Errorf("Failover() = %t, want %t", got, wantFailover)
	}
}
