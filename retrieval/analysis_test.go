package retrieval

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
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
			a := &LLMAnalyzer{Client: openai.NewClient(option.WithBaseURL(fake.URL()), option.WithAPIKey("k")),
				OnFallback: func(err error) { fellBack = err }}
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

func TestLLMAnalyzerUpstreamDown(t *testing.T) {
	fake := openaitest.NewServer(openaitest.Config{})
	fake.FailAlways(&openaitest.Fault{Status: 503})
	defer fake.Close()
	var fellBack error
	a := &LLMAnalyzer{Client: openai.NewClient(option.WithBaseURL(fake.URL()), option.WithAPIKey("k"), option.WithMaxRetries(0)),
		OnFallback: func(err error) { fellBack = err }}
	got, err := a.Analyze(context.Background(), []Message{{Role: "user", Content: "fees?"}})
	if err != nil || got.Source != "heuristic" || !got.NeedsRetrieval {
		t.Fatalf("Analyze = %+v, %v; want a heuristic analysis", got, err)
	}
	var apiErr *openai.Error
	if !errors.As(fellBack, &apiErr) || apiErr.StatusCode != 503 {
		t.Errorf("fallback error = %v, want the upstream's 503", fellBack)
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
