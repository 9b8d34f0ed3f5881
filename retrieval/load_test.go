package retrieval_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ragproxy/ragproxy/examples"
	"github.com/ragproxy/ragproxy/internal/indextest"
	"github.com/ragproxy/ragproxy/retrieval"
	"github.com/ragproxy/ragproxy/tokenizer"
)

// TestOpenGently checks that loading on one core builds the same retriever as Open: the same pages, passages
// and context for the example questions.
func TestOpenGently(t *testing.T) {
	dir := t.TempDir()
	indextest.Build(t, indextest.ExampleSite(t), examples.BaseURL, dir)
	tok, err := tokenizer.New()
	if err != nil {
		t.Fatal(err)
	}
	fast, err := retrieval.Open(dir, nil, tok, retrieval.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	gentle, err := retrieval.OpenGently(dir, nil, tok, retrieval.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"when do fall classes start 2024", "who is chair of the CS dept", "library hours saturday"} {
		a, err := fast.Retrieve(context.Background(), q, nil)
		if err != nil {
			t.Fatal(err)
		}
		b, err := gentle.Retrieve(context.Background(), q, nil)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(a.Pages, b.Pages); diff != "" || a.Context != b.Context {
			t.Errorf("%q: Open and OpenGently differ (-Open +OpenGently):\n%s", q, diff)
		}
	}
}
