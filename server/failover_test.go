package server

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ragproxy/ragproxy/compat/openaitest"
	"github.com/ragproxy/ragproxy/upstream"
)

// upstreamLog summarises what a fake upstream saw: one "model fault" entry
// per request.
func upstreamLog(s *openaitest.Server) []string {
	var out []string
	for _, r := range s.Requests() {
		e := r.Model
		if r.Fault != nil {
			switch {
			case r.Fault.Drop:
				e += " drop"
			case r.Fault.DropAfterHeaders:
				e += " drop-after-headers"
			case r.Fault.DropAfter > 0:
				e += " drop-mid-stream"
			case r.Fault.Status != 0:
				e += " " + strconv.Itoa(r.Fault.Status)
			}
		}
		out = append(out, e)
	}
	return out
}

func TestFailover(t *testing.T) {
	tests := []struct {
		name         string
		stream       bool
		faults       []openaitest.Fault
		fallback     bool
		fbFaults     []openaitest.Fault
		wantStatus   int
		wantPrimary  []string
		wantFallback []string
		wantInBody   string
	}{
		{name: "retry once after 500", faults: []openaitest.Fault{{Status: 500}},
			wantStatus: 200, wantPrimary: []string{"gpt-4o-mini 500", "gpt-4o-mini"}, wantInBody: "You said"},
		{name: "retry once after drop, stream", stream: true, faults: []openaitest.Fault{{Drop: true}},
			wantStatus: 200, wantPrimary: []string{"gpt-4o-mini drop", "gpt-4o-mini"}, wantInBody: "[DONE]"},
		{name: "retry after drop before first chunk", stream: true, faults: []openaitest.Fault{{DropAfterHeaders: true}},
			wantStatus: 200, wantPrimary: []string{"gpt-4o-mini drop-after-headers", "gpt-4o-mini"}, wantInBody: "[DONE]"},
		{name: "fail over after two 429", fallback: true, faults: []openaitest.Fault{{Status: 429}, {Status: 429}},
			wantStatus: 200, wantPrimary: []string{"gpt-4o-mini 429", "gpt-4o-mini 429"}, wantFallback: []string{"llama3"}, wantInBody: "You said"},
		{name: "fail over stream after 503s", stream: true, fallback: true, faults: []openaitest.Fault{{Status: 503}, {Status: 503}},
			wantStatus: 200, wantPrimary: []string{"gpt-4o-mini 503", "gpt-4o-mini 503"}, wantFallback: []string{"llama3"}, wantInBody: `"model":"llama3"`},
		{name: "no retry on 400", fallback: true, faults: []openaitest.Fault{{Status: 400}},
			wantStatus: 400, wantPrimary: []string{"gpt-4o-mini 400"}},
		{name: "everything down", fallback: true, faults: []openaitest.Fault{{Drop: true}, {Drop: true}}, fbFaults: []openaitest.Fault{{Status: 502}, {Status: 502}},
			wantStatus: 502, wantPrimary: []string{"gpt-4o-mini drop", "gpt-4o-mini drop"}, wantFallback: []string{"llama3 502", "llama3 502"}},
		{name: "never retry after first byte", stream: true, fallback: true, faults: []openaitest.Fault{{DropAfter: 3}},
			wantStatus: 200, wantPrimary: []string{"gpt-4o-mini drop-mid-stream"}, wantInBody: `data: {"error":`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := harnessOpts{}
			if tt.fallback {
				o.fallback = &openaitest.Config{Models: []string{"llama3"}}
			}
			h := newHarness(t, o)
			h.Fake.Fail(tt.faults...)
			if h.Fallback != nil {
				h.Fallback.Fail(tt.fbFaults...)
			}
			body := `{"model":"ragproxy","messages":[{"role":"user","content":"hello"}]}`
			if tt.stream {
				body = `{"model":"ragproxy","stream":true,"messages":[{"role":"user","content":"hello"}]}`
			}
			resp, got := h.post(t, "/chat/completions", body)
			if resp.StatusCode != tt.wantStatus {
				t.Errorf("status = %d, want %d; body %s", resp.StatusCode, tt.wantStatus, got)
			}
			if !strings.Contains(got, tt.wantInBody) {
				t.Errorf("body lacks %q:\n%s", tt.wantInBody, got)
			}
			if tt.stream && strings.Contains(tt.wantInBody, `"error"`) && strings.Contains(got, "[DONE]") {
				t.Errorf("stream ended with an error must not send [DONE]:\n%s", got)
			}
			if diff := cmp.Diff(tt.wantPrimary, upstreamLog(h.Fake)); diff != "" {
				t.Errorf("primary requests (-want +got):\n%s", diff)
			}
			if h.Fallback != nil {
				if diff := cmp.Diff(tt.wantFallback, upstreamLog(h.Fallback)); diff != "" {
					t.Errorf("fallback requests (-want +got):\n%s", diff)
				}
			}
		})
	}
}

// TestDisconnectCancelsUpstream reads part of a stream, hangs up, and checks
// the upstream saw its request cancelled long before the answer would end.
func TestDisconnectCancelsUpstream(t *testing.T) {
	for _, hang := range []bool{false, true} {
		name := "mid-stream"
		if hang {
			name = "upstream-stalled"
		}
		t.Run(name, func(t *testing.T) {
			long := strings.Repeat("word ", 200)
			h := newHarness(t, harnessOpts{
				cfg: Config{Heartbeat: 20 * time.Millisecond},
				fake: openaitest.Config{ChunkDelay: 20 * time.Millisecond, Reply: func(*openaitest.Request) openaitest.Reply {
					return openaitest.Reply{Content: long}
				}},
			})
			if hang {
				// Headers and pings go out, the upstream never answers.
				h.Fake.Fail(openaitest.Fault{Hang: true})
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			req, _ := newStreamRequest(ctx, h.URL, `{"stream":true,"messages":[{"role":"user","content":"go"}]}`)
			resp, err := httpClientNoPool().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			frames, err := readFrames(resp.Body, 3)
			if err != nil || len(frames) != 3 {
				t.Fatalf("read frames: %v %v", frames, err)
			}
			cancel()
			resp.Body.Close()
			rec, err := h.Fake.Wait(waitCtx(t), 0)
			if err != nil {
				t.Fatal(err)
			}
			if !rec.Canceled {
				t.Errorf("upstream request was not cancelled (chunks written %d)", rec.Chunks)
			}
			if rec.Chunks >= 200 {
				t.Errorf("upstream wrote all %d chunks; cancellation came too late", rec.Chunks)
			}
		})
	}
}

// blockingGrounder waits in Ground until its request ends, as a slow analysis would, and records that it began
// and that it ended.
type blockingGrounder struct{ began, ended chan struct{} }

func (g *blockingGrounder) Ground(ctx context.Context, _ *GroundRequest) (*Grounding, error) {
	close(g.began)
	<-ctx.Done()
	close(g.ended)
	return nil, ctx.Err()
}

// TestClientLeavingIsNoticedAtOnce checks that a client who closes its connection while nothing is written to it
// (a silent upstream, a long analysis) ends its request then, not at the next write a heartbeat minutes later
// would make. It logs how long that took.
func TestClientLeavingIsNoticedAtOnce(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		grounder   *blockingGrounder
	}{
		{"stream, silent upstream", `{"stream":true,"messages":[{"role":"user","content":"x"}]}`, nil},
		{"non-stream, silent upstream", `{"messages":[{"role":"user","content":"x"}]}`, nil},
		{"during analysis", `{"stream":true,"messages":[{"role":"user","content":"x"}]}`, &blockingGrounder{began: make(chan struct{}), ended: make(chan struct{})}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Config{Heartbeat: time.Hour}
			if tc.grounder != nil {
				cfg.Grounder = tc.grounder
			}
			h := newHarness(t, harnessOpts{cfg: cfg, client: upstream.Config{FirstByteTimeout: time.Hour}})
			h.Fake.FailAlways(&openaitest.Fault{Hang: true})
			ctx, cancel := context.WithCancel(context.Background())
			req, err := newStreamRequest(ctx, h.URL, tc.body)
			if err != nil {
				t.Fatal(err)
			}
			go func() {
				if resp, err := httpClientNoPool().Do(req); err == nil {
					resp.Body.Close()
				}
			}()
			if tc.grounder == nil {
				if !waitFor(waitCtx(t), func() bool { return len(h.Fake.Requests()) > 0 }) {
					t.Fatal("the request never reached the upstream")
				}
			} else {
				select {
				case <-tc.grounder.began: // the request is in Ground
				case <-waitCtx(t).Done():
					t.Fatal("the request never reached Ground")
				}
			}
			left := time.Now()
			cancel() // the client goes away
			ended := waitFor(waitCtx(t), func() bool {
				if tc.grounder != nil {
					select {
					case <-tc.grounder.ended:
						return true
					default:
						return false
					}
				}
				reqs := h.Fake.Requests()
				return len(reqs) > 0 && reqs[0].Canceled
			})
			if !ended {
				t.Fatal("the request went on after its client left")
			}
			t.Logf("%s: ended %v after the client left", tc.name, time.Since(left))
		})
	}
}
