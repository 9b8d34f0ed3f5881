package retrieval

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/ragproxy/ragproxy/compat"
	"github.com/ragproxy/ragproxy/compat/openaitest"
)

func TestLLMAnalyzer(t *testing.T) {
	convo := []Message{
		{Role: "user", Content: "tell me about the economics major"},
		{Role: "assistant", Content: "It is a BA."},
		{Role: "user", Content: "who chairs it?"},
	}
	tests := []struct {
		name     string
		reply    string
		want     Analysis
		fallback bool
	}{
		{"strict JSON", `{"retrieval_needed":true,"rewrites":["economics department chair","chair of economics","economics major contact"]}`,
			Analysis{Question: "who chairs it?", NeedsRetrieval: true, Source: "llm",
				Rewrites: []string{"economics department chair", "chair of economics", "economics major contact"}}, false},
		{"no retrieval needed", `{"retrieval_needed":false,"rewrites":["a","b","c"]}`,
			Analysis{Question: "who chairs it?", NeedsRetrieval: false, Source: "llm", Rewrites: []string{"a", "b", "c"}}, false},
		{"junk falls back", `I think you should search for economics.`,
			Analysis{Question: "who chairs it?", NeedsRetrieval: true, Source: "heuristic",
				Rewrites: []string{"who chairs it?", "tell me about the economics major who chairs it?", "chairs"}}, true},
		{"missing field falls back", `{"rewrites":["x"]}`,
			Analysis{Question: "who chairs it?", NeedsRetrieval: true, Source: "heuristic",
				Rewrites: []string{"who chairs it?", "tell me about the economics major who chairs it?", "chairs"}}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := openaitest.NewServer(openaitest.Config{Reply: func(*openaitest.Request) openaitest.Reply {
				return openaitest.Reply{Content: tt.reply}
			}})
			defer fake.Close()
			var fellBack error
			a := &LLMAnalyzer{Client: testClient(t, fake), OnFallback: func(err error) { fellBack = err }}
			got, err := a.Analyze(context.Background(), convo)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("analysis (-want +got):\n%s", diff)
			}
			if (fellBack != nil) != tt.fallback {
				t.Errorf("fallback error = %v, want fallback %v", fellBack, tt.fallback)
			}
			req := fake.Requests()[0]
			var body struct {
				ResponseFormat struct {
					Type       string `json:"type"`
					JSONSchema struct {
						Strict bool `json:"strict"`
					} `json:"json_schema"`
				} `json:"response_format"`
			}
			json.Unmarshal(req.Body, &body)
			if body.ResponseFormat.Type != "json_schema" || !body.ResponseFormat.JSONSchema.Strict {
				t.Errorf("request did not ask for strict JSON: %s", req.Body)
			}
			if !strings.Contains(req.Messages[1].Text(), "assistant: It is a BA.") {
				t.Errorf("the conversation was not passed: %q", req.Messages[1].Text())
			}
		})
	}
}

// testClient is the proxy's upstream client in front of fake.
func testClient(t *testing.T, fake *openaitest.Server) *compat.Client {
	t.Helper()
	c, err := compat.NewClient(compat.ClientConfig{Backoff: time.Millisecond,
		Primary: compat.Upstream{BaseURL: fake.URL(), APIKey: "k", Model: "gpt-4o-mini"}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestLLMAnalyzerSickUpstream checks that analysis never stalls or fails an answer: an upstream that is down,
// hangs, or asks to be retried much later leaves the heuristic analysis, within the analysis deadline.
func TestLLMAnalyzerSickUpstream(t *testing.T) {
	tests := []struct {
		name   string
		fault  openaitest.Fault
		status int // of the error the fallback reports; 0 for the deadline
	}{
		{"down", openaitest.Fault{Status: 503}, 503},
		{"hangs", openaitest.Fault{Hang: true}, 0},
		{"rate limited for a minute", openaitest.Fault{Status: 429, RetryAfter: "60"}, 429},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := openaitest.NewServer(openaitest.Config{})
			fake.FailAlways(&tt.fault)
			defer fake.Close()
			var fellBack error
			a := &LLMAnalyzer{Client: testClient(t, fake), Timeout: 300 * time.Millisecond, OnFallback: func(err error) { fellBack = err }}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			got, err := a.Analyze(ctx, []Message{{Role: "user", Content: "fees?"}})
			if err != nil || got.Source != "heuristic" || !got.NeedsRetrieval {
				t.Fatalf("Analyze = %+v, %v; want a heuristic analysis", got, err)
			}
			if ctx.Err() != nil {
				t.Fatal("analysis outlived its deadline")
			}
			var apiErr *compat.APIError
			switch {
			case tt.status == 0 && !errors.Is(fellBack, context.DeadlineExceeded):
				t.Errorf("fallback error = %v, want the analysis deadline", fellBack)
			case tt.status != 0 && (!errors.As(fellBack, &apiErr) || apiErr.Status != tt.status):
				t.Errorf("fallback error = %v, want the upstream's %d", fellBack, tt.status)
			}
			if tt.fault.Hang {
				// The fake's handler ends once the analyzer hangs up; a call left open would hold it past 5s.
				wctx, wcancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer wcancel()
				if req, err := fake.Wait(wctx, 0); err != nil || !req.Canceled {
					t.Errorf("a hung analysis call was left open: canceled %v, %v", req.Canceled, err)
				}
			}
		})
	}
}

func TestHeuristicAnalysis(t *testing.T) {
	msgs := []Message{
		{Role: "user", Content: "tell me about the economics major"},
		{Role: "assistant", Content: "It is ..."},
		{Role: "user", Content: "who is the chair?"},
	}
	a, err := Heuristic{}.Analyze(context.Background(), msgs)
	if err != nil {
		t.Fatal(err)
	}
	want := Analysis{Question: "who is the chair?", NeedsRetrieval: true, Source: "heuristic",
		Rewrites: []string{"who is the chair?", "tell me about the economics major who is the chair?", "chair"}}
	if diff := cmp.Diff(want, a); diff != "" {
		t.Errorf("analysis (-want +got):\n%s", diff)
	}
}

// TestLLMAnalyzerSiteName checks that the analysis prompt names the site the context names, before the
// analyzer's own.
func TestLLMAnalyzerSiteName(t *testing.T) {
	fake := openaitest.NewServer(openaitest.Config{Reply: func(*openaitest.Request) openaitest.Reply {
		return openaitest.Reply{Content: `{"retrieval_needed":true,"rewrites":["a","b","c"]}`}
	}})
	defer fake.Close()
	a := &LLMAnalyzer{Client: testClient(t, fake), SiteName: "Lakeshore Polytechnic"}
	msgs := []Message{{Role: "user", Content: "placement requirements?"}}
	for _, ctx := range []context.Context{context.Background(), WithSiteName(context.Background(), "Lakeshore Polytechnic — Nursing")} {
		if _, err := a.Analyze(ctx, msgs); err != nil {
			t.Fatal(err)
		}
	}
	reqs := fake.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	if p := reqs[0].Messages[0].Text(); !strings.Contains(p, "assistant for Lakeshore Polytechnic.") {
		t.Errorf("prompt without a site in the context = %q", p)
	}
	if p := reqs[1].Messages[0].Text(); !strings.Contains(p, "assistant for Lakeshore Polytechnic — Nursing.") {
		t.Errorf("prompt for the nursing assistant = %q", p)
	}
}
