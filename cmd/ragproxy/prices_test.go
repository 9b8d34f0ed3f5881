package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ragproxy/ragproxy/index"
	"github.com/ragproxy/ragproxy/ingest"
)

func TestParsePrices(t *testing.T) {
	got, err := parsePrices([]string{"gpt-4o-mini=0.15,0.6", "my-embedder=0.01", "local-llm=0,0"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]ingest.Price{"gpt-4o-mini": {Input: 0.15, Output: 0.6}, "my-embedder": {Input: 0.01}, "local-llm": {}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	for _, bad := range []string{"gpt-4o-mini", "=1,2", "m=x,1", "m=1,y", "m=-1,0"} {
		if _, err := parsePrices([]string{bad}); err == nil {
			t.Errorf("--price %q accepted", bad)
		}
	}
}

func TestUsageLines(t *testing.T) {
	got := strings.Join(usageLines([]index.Usage{
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
