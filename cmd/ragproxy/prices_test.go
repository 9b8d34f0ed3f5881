package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"

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
