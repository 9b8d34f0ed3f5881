package ingest

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParsePrice(t *testing.T) {
	got := map[string]Price{}
	for _, s := range []string{"gpt-4o-mini=0.15,0.6", "my-embedder=0.01", "local-llm=0,0"} {
		m, p, err := ParsePrice(s)
		if err != nil {
			t.Fatal(err)
		}
		got[m] = p
	}
	want := map[string]Price{"gpt-4o-mini": {Input: 0.15, Output: 0.6}, "my-embedder": {Input: 0.01}, "local-llm": {}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	for _, bad := range []string{"gpt-4o-mini", "=1,2", "m=x,1", "m=1,y", "m=-1,0"} {
		if _, _, err := ParsePrice(bad); err == nil {
			t.Errorf("ParsePrice(%q) accepted", bad)
		}
	}
}
