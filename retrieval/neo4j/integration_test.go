package neo4j

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ragproxy/ragproxy/index"
)

// TestIntegration writes and reads a small graph on the server NEO4J_URI names (with NEO4J_USER,
// NEO4J_PASSWORD and optionally NEO4J_DATABASE). It replaces every Page and Chunk node of that database, so
// point it at a scratch database.
func TestIntegration(t *testing.T) {
	uri := os.Getenv("NEO4J_URI")
	if uri == "" {
		t.Skip("skipping: NEO4J_URI is unset (set NEO4J_URI, NEO4J_USER, NEO4J_PASSWORD to a scratch Neo4j database)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := New(Config{URI: uri, User: os.Getenv("NEO4J_USER"), Password: os.Getenv("NEO4J_PASSWORD"), Database: os.Getenv("NEO4J_DATABASE"), BatchSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx)
	if err := s.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	ix := smallIndex()
	if err := s.Write(ctx, ix); err != nil {
		t.Fatal(err)
	}
	communities, err := s.Communities(ctx, []int{0, 1, 2, 42})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[int]int{0: 5, 1: 5, 2: 9999}, communities); diff != "" {
		t.Errorf("communities (-want +got):\n%s", diff)
	}
	neighbours, err := s.Neighbours(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]int{1, 2}, neighbours); diff != "" {
		t.Errorf("neighbours of a (-want +got):\n%s", diff)
	}

	// Re-ingest: c disappears and a and b swap page ids; the chunk ids rotate (b0 takes 0 from a0, a0 takes 1
	// from a1, a1 takes 2 from b0), a cycle that only releasing ids before setting them gets past the
	// uniqueness constraints.
	v2 := &index.Index{
		Pages: []index.Page{
			{ID: 0, URL: "https://x.edu/b", Title: "B", Summary: "sb", Hash: "hb", Links: []int{1}, Community: 7, Chunks: []int{0}},
			{ID: 1, URL: "https://x.edu/a", Title: "A", Summary: "sa", Hash: "ha", Links: []int{0}, Community: 8, Chunks: []int{1, 2}},
		},
		Chunks: []index.Chunk{
			{ID: 0, PageID: 0, Ord: 0, Text: "b0", Tokens: 5},
			{ID: 1, PageID: 1, Ord: 0, Text: "a0", Tokens: 3},
			{ID: 2, PageID: 1, Ord: 1, Text: "a1", Tokens: 4},
		},
	}
	if err := s.Write(ctx, v2); err != nil {
		t.Fatal(err)
	}
	if communities, err = s.Communities(ctx, []int{0, 1, 2}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[int]int{0: 7, 1: 8}, communities); diff != "" {
		t.Errorf("communities after re-ingest (-want +got):\n%s", diff)
	}
	if neighbours, err = s.Neighbours(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]int{1}, neighbours); diff != "" {
		t.Errorf("neighbours of b after re-ingest (-want +got):\n%s", diff)
	}
	if err := s.Write(ctx, &index.Index{}); err != nil {
		t.Fatalf("clean up: %v", err)
	}
}
