package summary

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/ragproxy/ragproxy/llm"
)

// TestLLMPrompt checks what a summary asks the model and how its answer becomes the one line.
func TestLLMPrompt(t *testing.T) {
	tests := []struct {
		name   string
		llm    LLM
		doc    Doc
		answer string
		want   llm.Prompt
		line   string
	}{
		{"default model", LLM{}, Doc{Title: "Fees", Markdown: "# Fees\n\n$80."}, "Fees:\n  $80 per   term.",
			llm.Prompt{Model: DefaultModel, System: LLMPrompt, User: "Title: Fees\n\n# Fees\n\n$80."}, "Fees: $80 per term."},
		{"the index's model, the page cut", LLM{Model: "gpt-4o", MaxInputChars: 5}, Doc{Title: "Fees", Markdown: "# Fees\n\n$80."}, "Fees.",
			llm.Prompt{Model: "gpt-4o", System: LLMPrompt, User: "Title: Fees\n\n# Fee"}, "Fees."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []llm.Prompt
			l := tt.llm
			l.Ask = func(_ context.Context, p llm.Prompt) (llm.Reply, error) {
				got = append(got, p)
				return llm.Reply{Text: tt.answer}, nil
			}
			line, _, err := l.Summarize(context.Background(), tt.doc)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]llm.Prompt{tt.want}, got); diff != "" {
				t.Errorf("prompts (-want +got):\n%s", diff)
			}
			if line != tt.line {
				t.Errorf("summary %q, want %q", line, tt.line)
			}
		})
	}
}

// TestLLMFailures checks that a failed call and an empty answer are errors naming the page, so that its
// extractive line stays.
func TestLLMFailures(t *testing.T) {
	errDown := errors.New("upstream down")
	for _, tt := range []struct {
		name  string
		reply llm.Reply
		err   error
	}{
		{"call fails", llm.Reply{}, errDown},
		{"blank answer", llm.Reply{Text: " \n "}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			l := &LLM{Ask: func(context.Context, llm.Prompt) (llm.Reply, error) { return tt.reply, tt.err }}
			line, _, err := l.Summarize(context.Background(), Doc{Title: "Fees", Markdown: "x"})
			if err == nil || !strings.Contains(err.Error(), `"Fees"`) || tt.err != nil && !errors.Is(err, tt.err) {
				t.Errorf("Summarize = %q, %v; want an error about the page wrapping %v", line, err, tt.err)
			}
		})
	}
}
