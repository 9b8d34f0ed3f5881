package upstream_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ragproxy/ragproxy/compat"
	"github.com/ragproxy/ragproxy/compat/openaitest"
	"github.com/ragproxy/ragproxy/ingest/summary"
	"github.com/ragproxy/ragproxy/llm"
	"github.com/ragproxy/ragproxy/retrieval"
	"github.com/ragproxy/ragproxy/upstream"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

// newClient is a client with one upstream, fake, whose configured model is gpt-4o-mini.
func newClient(t *testing.T, fake *openaitest.Server) *upstream.Client {
	t.Helper()
	c, err := upstream.New(upstream.Config{Backoff: time.Millisecond,
		Primary: upstream.Endpoint{BaseURL: fake.URL(), APIKey: "k", Model: "gpt-4o-mini"}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestAskerRequests checks the bodies query analysis and summaries send upstream through an Asker against
// testdata/ask/*.json, byte for byte; -update rewrites the files. The texts hold characters JSON encoders treat
// apart ("<", "&", a dash outside ASCII).
func TestAskerRequests(t *testing.T) {
	fake := openaitest.NewServer(openaitest.Config{Reply: func(*openaitest.Request) openaitest.Reply {
		return openaitest.Reply{Content: `{"retrieval_needed":true,"rewrites":["a","b","c"]}`}
	}})
	defer fake.Close()
	c := newClient(t, fake)
	convo := []retrieval.Message{{Role: "user", Content: `fees for <b>R&D</b> "students"?`},
		{Role: "assistant", Content: "Which?"}, {Role: "user", Content: "grad ones — 2024"}}
	ctx := context.Background()
	tests := []struct {
		golden string
		send   func() error
	}{
		{"analysis_site", func() error {
			a := &retrieval.LLMAnalyzer{Ask: upstream.Asker{Client: c}.Ask}
			_, err := a.Analyze(retrieval.WithSiteName(ctx, "Lakeshore Polytechnic — Nursing & <Care>"), convo)
			return err
		}},
		{"analysis_model", func() error {
			a := &retrieval.LLMAnalyzer{Ask: upstream.Asker{Client: c, Model: "gpt-4o"}.Ask}
			_, err := a.Analyze(ctx, convo)
			return err
		}},
		{"analysis_streamed", func() error {
			// A caller that takes each rewrite as it is written has the analysis streamed.
			a := &retrieval.LLMAnalyzer{Ask: upstream.Asker{Client: c}.Ask}
			_, err := a.Analyze(retrieval.WithRewriteHook(ctx, func(string) {}), convo)
			return err
		}},
		{"summary", func() error {
			s := &summary.LLM{Ask: upstream.Asker{Client: c}.Ask}
			_, _, err := s.Summarize(ctx, summary.Doc{Title: "Fees & <Charges>", Markdown: "# Fees\n\nTuition is $1,000 <per> term & more.\n"})
			return err
		}},
		{"summary_model", func() error {
			// The summarizer's model wins over the Asker's.
			s := &summary.LLM{Ask: upstream.Asker{Client: c, Model: "gpt-4o-mini"}.Ask, Model: "gpt-4o"}
			_, _, err := s.Summarize(ctx, summary.Doc{Title: "T", Markdown: "x"})
			return err
		}},
	}
	for i, tt := range tests {
		t.Run(tt.golden, func(t *testing.T) {
			if err := tt.send(); err != nil {
				t.Fatal(err)
			}
			req, err := fake.Wait(ctx, i)
			if err != nil {
				t.Fatal(err)
			}
			file := filepath.Join("testdata", "ask", tt.golden+".json")
			if *update {
				if err := os.WriteFile(file, req.Body, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(want, req.Body) {
				t.Errorf("request body differs from %s (-want +got):\n%s", file, cmp.Diff(string(want), string(req.Body)))
			}
		})
	}
}

// TestAskerPrompt checks how a prompt's settings are written and how the reply is read.
func TestAskerPrompt(t *testing.T) {
	const completion = `{"id":"x","object":"chat.completion","model":"gpt-4o-mini","choices":[{"index":0,` +
		`"message":{"role":"assistant","content":"Fees are $80."},"finish_reason":"stop"}],` +
		`"usage":{"prompt_tokens":31,"completion_tokens":4,"total_tokens":35}}`
	fake := openaitest.NewServer(openaitest.Config{})
	defer fake.Close()
	fake.Fail(openaitest.Fault{Status: 200, Body: completion})
	ask := upstream.Asker{Client: newClient(t, fake)}.Ask
	got, err := ask(context.Background(), llm.Prompt{System: "Answer.", User: "Fees?", MaxTokens: 64, Temperature: 0.25})
	if err != nil {
		t.Fatal(err)
	}
	if want := (llm.Reply{Text: "Fees are $80.", Usage: llm.Usage{Prompt: 31, Completion: 4}}); got != want {
		t.Errorf("reply = %+v, want %+v", got, want)
	}
	var body map[string]json.RawMessage
	if err := json.Unmarshal(fake.Requests()[0].Body, &body); err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]string{"model": `"gpt-4o-mini"`, "max_tokens": "64", "temperature": "0.25"} {
		if string(body[key]) != want {
			t.Errorf("%s = %s, want %s", key, body[key], want)
		}
	}
	if _, ok := body["response_format"]; ok {
		t.Errorf("a text prompt asked for a response_format: %s", body["response_format"])
	}
}

// TestAskerNoContent checks that a completion without text, a tool call, is an error rather than an empty reply.
func TestAskerNoContent(t *testing.T) {
	fake := openaitest.NewServer(openaitest.Config{Reply: func(*openaitest.Request) openaitest.Reply {
		return openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "call_1", Name: "search", Arguments: `{"q":"fees"}`}}}
	}})
	defer fake.Close()
	got, err := upstream.Asker{Client: newClient(t, fake)}.Ask(context.Background(), llm.Prompt{User: "Fees?"})
	if err == nil {
		t.Fatalf("reply = %+v, want an error", got)
	}
}

// TestAnalysisSickUpstream checks that query analysis over a sick upstream never stalls or fails an answer: an
// upstream that is down, hangs, or asks to be retried much later leaves the heuristic analysis, within the
// analysis deadline, and a hung call is not left open.
func TestAnalysisSickUpstream(t *testing.T) {
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
			a := &retrieval.LLMAnalyzer{Ask: upstream.Asker{Client: newClient(t, fake)}.Ask, Timeout: 300 * time.Millisecond,
				OnFallback: func(err error) { fellBack = err }}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			got, err := a.Analyze(ctx, []retrieval.Message{{Role: "user", Content: "fees?"}})
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
				// Wait returns once the fake is done with the request, which a hung one is only once its
				// caller left.
				req, err := fake.Wait(ctx, 0)
				if err != nil {
					t.Fatalf("a hung analysis call was left open: %v", err)
				}
				if !req.Canceled {
					t.Errorf("a hung analysis call was left open")
				}
			}
		})
	}
}

// TestAskerStreams checks an Ask with OnText: the request is streamed with its usage asked for, OnText sees the
// text grow piece by piece, and the Reply (text and usage) is the one the same prompt gets without streaming.
func TestAskerStreams(t *testing.T) {
	const content = `{"retrieval_needed":true,"rewrites":["tuition per semester","library opening hours","nursing placements"]}`
	fake := openaitest.NewServer(openaitest.Config{Reply: func(*openaitest.Request) openaitest.Reply {
		return openaitest.Reply{Content: content}
	}})
	defer fake.Close()
	ask := upstream.Asker{Client: newClient(t, fake)}.Ask
	p := llm.Prompt{System: "Analyse.", User: "user: tuition?", JSON: &llm.Schema{Name: "query_analysis",
		Definition: map[string]any{"type": "object"}}}
	plain, err := ask(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	var seen []string
	p.OnText = func(sofar string) { seen = append(seen, sofar) }
	streamed, err := ask(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(plain, streamed); diff != "" || plain.Text != content || plain.Usage.Completion == 0 {
		t.Errorf("streamed reply differs from the plain one (-plain +streamed):\n%s", diff)
	}
	if len(seen) < 3 || seen[len(seen)-1] != content {
		t.Fatalf("OnText saw %d texts, the last %q; want the text growing to the whole reply", len(seen), seen[len(seen)-1:])
	}
	for i := 1; i < len(seen); i++ {
		if len(seen[i]) <= len(seen[i-1]) || seen[i][:len(seen[i-1])] != seen[i-1] {
			t.Fatalf("OnText texts %d and %d: %q then %q, want each to extend the last", i-1, i, seen[i-1], seen[i])
		}
	}
	reqs := fake.Requests()
	if len(reqs) != 2 || reqs[0].Stream || !reqs[1].Stream || !reqs[1].IncludeUsage {
		t.Errorf("requests: stream %v/%v, include_usage %v; want the second streamed with its usage", reqs[0].Stream, reqs[1].Stream, reqs[1].IncludeUsage)
	}
}
