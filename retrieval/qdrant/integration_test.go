package qdrant

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"
)

// TestIntegration runs the adapter against a real Qdrant named by QDRANT_URL (gRPC, e.g. http://localhost:6334)
// and QDRANT_API_KEY. It works in collections of its own and drops them afterwards.
func TestIntegration(t *testing.T) {
	url := os.Getenv("QDRANT_URL")
	if url == "" {
		t.Skip("skipping: QDRANT_URL is unset (point it at a Qdrant gRPC endpoint, e.g. http://localhost:6334)")
	}
	s, err := New(Config{URL: url, APIKey: os.Getenv("QDRANT_API_KEY"), Name: fmt.Sprintf("ragproxy_test_%d", time.Now().UnixNano())})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() }) // registered first, so it runs after the collections are dropped
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	t.Cleanup(func() {
		if err := s.DeleteCollections(context.Background()); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	})
	version, err := s.Health(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("Qdrant %s", version)

	ix := synthIndex(30, 3, 32, 9)
	if _, err := s.Sync(ctx, ix); err != nil {
		t.Fatal(err)
	}
	hits, err := s.SearchSummaries(ctx, ix.SummaryVectors[7], nil, nil, 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) == 0 || hits[0].PageID != 7 {
		t.Errorf("dense summary search = %+v, want page 7 first", hits)
	}
	idx, val := queryVector("topic21")
	if hits, err = s.SearchSummaries(ctx, nil, idx, val, 3); err != nil {
		t.Fatal(err)
	}
	if len(hits) == 0 || hits[0].PageID != 21 {
		t.Errorf("BM25 summary search = %+v, want page 21 first", hits)
	}
	chunks, err := s.SearchChunks(ctx, ix.ChunkVectors[ix.Pages[4].Chunks[1]], idx, val, []int{4, 21}, 5)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range chunks {
		if h.PageID != 4 && h.PageID != 21 {
			t.Errorf("chunk hit from page %d outside the filter", h.PageID)
		}
	}
	// Drop a page and re-sync: its points go.
	st, err := s.Sync(ctx, withoutPage(ix, 0))
	if err != nil {
		t.Fatal(err)
	}
	if st.PagesDeleted != 1 || st.PagesRelabelled != 29 || st.PagesCopied != 29 || st.PagesWritten != 0 {
		t.Errorf("sync after dropping page 0 = %+v, want 1 deleted and 29 copied and relabelled", st)
	}
	idx, val = queryVector("topic0")
	if hits, err = s.SearchSummaries(ctx, nil, idx, val, 3); err != nil {
		t.Fatal(err)
	}
	for _, h := range hits {
		if h.URL == ix.Pages[0].URL {
			t.Errorf("deleted page still found: %+v", h)
		}
	}
}
