package neo4j

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ragproxy/ragproxy/index"
)

// TestIntegration writes and reads versions of a small graph on the server NEO4J_URI names (with NEO4J_USER,
// NEO4J_PASSWORD and optionally NEO4J_DATABASE). It replaces every Page, Chunk and IndexVersion node of that
// database, so point it at a scratch database. TestVersions runs the same against the in-process fake.
func TestIntegration(t *testing.T) {
	uri := os.Getenv("NEO4J_URI")
	if uri == "" {
		t.Skip("skipping: NEO4J_URI is unset (set NEO4J_URI, NEO4J_USER, NEO4J_PASSWORD to a scratch Neo4j database)")
	}
	testVersions(t, Config{URI: uri, User: os.Getenv("NEO4J_USER"), Password: os.Getenv("NEO4J_PASSWORD"), Database: os.Getenv("NEO4J_DATABASE")})
}

// testVersions writes three versions of a small graph to the server cfg names and reads them back as
// servers on each version would.
func testVersions(t *testing.T, cfg Config) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	small := cfg
	small.BatchSize = 2
	s, err := New(small)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx)
	if err := s.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	v1 := smallIndex()
	if _, err := s.Write(ctx, v1); err != nil {
		t.Fatal(err)
	}
	g1 := s.Graph("v1")
	communities, err := g1.Communities(ctx, []int{0, 1, 2, 42})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[int]int{0: 5, 1: 5, 2: 9999}, communities); diff != "" {
		t.Errorf("communities (-want +got):\n%s", diff)
	}
	neighbours, err := g1.Neighbours(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]int{1, 2}, neighbours); diff != "" {
		t.Errorf("neighbours of a (-want +got):\n%s", diff)
	}

	// v2: c disappears and a and b swap page ids; the chunk ids rotate. a and b are unchanged, so copied.
	v2 := &index.Index{
		Manifest: index.Manifest{Version: "v2"},
		Pages: []index.Page{
			{ID: 0, URL: "https://x.edu/b", Title: "B", Summary: "sb", Hash: "hb", Section: "/en/", Links: []int{1}, Community: 7, Chunks: []int{0}},
			{ID: 1, URL: "https://x.edu/a", Title: "A", Summary: "sa", Hash: "ha", Links: []int{0}, Community: 8, Chunks: []int{1, 2}},
		},
		Chunks: []index.Chunk{
			{ID: 0, PageID: 0, Ord: 0, Text: "b0", Tokens: 5},
			{ID: 1, PageID: 1, Ord: 0, Text: "a0", Tokens: 3},
			{ID: 2, PageID: 1, Ord: 1, Text: "a1", Tokens: 4},
		},
	}
	st, err := s.Write(ctx, v2)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(WriteStats{Version: "v2", Previous: "v1", PagesCopied: 2, Dropped: []string{}}, st); diff != "" {
		t.Errorf("second write (-want +got):\n%s", diff)
	}
	if communities, err = s.Graph("v2").Communities(ctx, []int{0, 1, 2}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[int]int{0: 7, 1: 8}, communities); diff != "" {
		t.Errorf("v2 communities (-want +got):\n%s", diff)
	}
	// A server still on v1 reads v1.
	if communities, err = g1.Communities(ctx, []int{0, 1, 2}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[int]int{0: 5, 1: 5, 2: 9999}, communities); diff != "" {
		t.Errorf("v1 communities after v2 (-want +got):\n%s", diff)
	}
	// Re-writing the current version writes nothing.
	if st, err = s.Write(ctx, v2); err != nil || st.PagesWritten+st.PagesCopied != 0 {
		t.Errorf("re-write of v2 = %+v, %v", st, err)
	}
	// v3 drops v1.
	v3 := *v2
	v3.Manifest.Version = "v3"
	if st, err = s.Write(ctx, &v3); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"v1"}, st.Dropped); diff != "" {
		t.Errorf("dropped (-want +got):\n%s", diff)
	}
	if communities, err = g1.Communities(ctx, []int{0, 1, 2}); err != nil || len(communities) != 0 {
		t.Errorf("v1 communities after it was dropped = %v, %v; want none", communities, err)
	}
	one := cfg
	one.KeepVersions = 1
	clean, err := New(one)
	if err != nil {
		t.Fatal(err)
	}
	defer clean.Close(ctx)
	if _, err := clean.Write(ctx, &index.Index{Manifest: index.Manifest{Version: "empty"}}); err != nil {
		t.Fatalf("clean up: %v", err)
	}
}
