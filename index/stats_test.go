package index

import (
	"strings"
	"testing"
)

func TestUsageLines(t *testing.T) {
	got := strings.Join(UsageLines([]Usage{
		{Stage: "summaries", Model: "gpt-4o-mini", PromptTokens: 400000, CompletionTokens: 30000, CostUSD: 0.078, Priced: true},
		{Stage: "embeddings", Model: "my-embedder", PromptTokens: 100000},
	}), "\n")
	want := "summaries (gpt-4o-mini): 400000 prompt + 30000 completion tokens, about $0.0780\n" +
		"embeddings (my-embedder): 100000 tokens, no price for this model (--price)\n" +
		"estimated cost in all: $0.0780"
	if got != want {
		t.Errorf("usage lines:\n%s\nwant:\n%s", got, want)
	}
}
