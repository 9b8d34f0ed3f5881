package neo4j

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ragproxy/ragproxy/index"
)

func TestStatements(t *testing.T) {
	rows := []any{map[string]any{"url": "https://x.edu/a", "page_id": int64(1)}}
	tests := []struct {
		name string
		got  Statement
		want Statement
	}{
		{"delete missing", DeleteMissingPages([]string{"https://x.edu/a"}), Statement{
			Cypher: "MATCH (p:Page) WHERE NOT p.url IN $urls\nOPTIONAL MATCH (p)-[:HAS_CHUNK]->(c:Chunk)\nDETACH DELETE c, p",
			Params: map[string]any{"urls": []string{"https://x.edu/a"}},
		}},
		{"trim chunks", TrimChunks(rows), Statement{
			Cypher: "UNWIND $rows AS row\nMATCH (:Page {url: row.url})-[:HAS_CHUNK]->(c:Chunk)\nWHERE c.chunk_number >= row.chunks\nDETACH DELETE c",
			Params: map[string]any{"rows": rows},
		}},
		{"release page ids", ReleasePageIDs(rows), Statement{
			Cypher: "UNWIND $rows AS row\nMATCH (p:Page {url: row.url})\nWHERE p.page_id <> row.page_id\nREMOVE p.page_id",
			Params: map[string]any{"rows": rows},
		}},
		{"release chunk ids", ReleaseChunkIDs(rows), Statement{
			Cypher: "UNWIND $rows AS row\nMATCH (:Page {url: row.url})-[:HAS_CHUNK]->(c:Chunk {chunk_number: row.chunk_number})\nWHERE c.chunk_id <> row.chunk_id\nREMOVE c.chunk_id",
			Params: map[string]any{"rows": rows},
		}},
		{"merge pages", MergePages(rows), Statement{
			Cypher: "UNWIND $rows AS row\nMERGE (p:Page {url: row.url})\nSET p.page_id = row.page_id, p.title = row.title, p.summary = row.summary, p.section = row.section,\n    p.hash = row.hash, p.community_id = row.community_id",
			Params: map[string]any{"rows": rows},
		}},
		{"merge chunks", MergeChunks(rows), Statement{
			Cypher: "UNWIND $rows AS row\nMATCH (p:Page {url: row.url})\nMERGE (p)-[:HAS_CHUNK]->(c:Chunk {chunk_number: row.chunk_number})\nSET c.chunk_id = row.chunk_id, c.content = row.content, c.tokens = row.tokens",
			Params: map[string]any{"rows": rows},
		}},
		{"replace links", ReplaceLinks(rows), Statement{
			Cypher: "UNWIND $rows AS row\nMATCH (p:Page {url: row.url})\nOPTIONAL MATCH (p)-[old:LINKS_TO]->(:Page)\nDELETE old\nWITH DISTINCT p, row\nUNWIND row.links AS target\nMATCH (q:Page {url: target})\nMERGE (p)-[:LINKS_TO]->(q)",
			Params: map[string]any{"rows": rows},
		}},
		{"communities", CommunitiesQuery([]int{3, 1}), Statement{
			Cypher: "MATCH (p:Page) WHERE p.page_id IN $ids\nRETURN p.page_id AS page_id, p.community_id AS community_id",
			Params: map[string]any{"ids": []int64{3, 1}},
		}},
		{"neighbours", NeighboursQuery(7), Statement{
			Cypher: "MATCH (:Page {page_id: $id})-[:LINKS_TO]-(q:Page)\nRETURN DISTINCT q.page_id AS page_id ORDER BY page_id",
			Params: map[string]any{"id": int64(7)},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestConstraints(t *testing.T) {
	var got []string
	for _, st := range Constraints() {
		got = append(got, st.Cypher)
	}
	want := []string{
		"CREATE CONSTRAINT page_url IF NOT EXISTS FOR (p:Page) REQUIRE p.url IS UNIQUE",
		"CREATE CONSTRAINT page_id IF NOT EXISTS FOR (p:Page) REQUIRE p.page_id IS UNIQUE",
		"CREATE CONSTRAINT chunk_id IF NOT EXISTS FOR (c:Chunk) REQUIRE c.chunk_id IS UNIQUE",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// smallIndex is three pages: a links to b and c, b links to a; a has two chunks, b one, c none.
func smallIndex() *index.Index {
	return &index.Index{
		Pages: []index.Page{
			{ID: 0, URL: "https://x.edu/a", Title: "A", Summary: "sa", Hash: "ha", Links: []int{1, 2}, Community: 5, Chunks: []int{0, 1}},
			{ID: 1, URL: "https://x.edu/b", Title: "B", Summary: "sb", Hash: "hb", Section: "/en/", Links: []int{0}, Community: 5, Chunks: []int{2}},
			{ID: 2, URL: "https://x.edu/c", Title: "C", Summary: "sc", Hash: "hc", Community: index.SmallComponentCommunity},
		},
		Chunks: []index.Chunk{
			{ID: 0, PageID: 0, Ord: 0, Text: "a0", Tokens: 3},
			{ID: 1, PageID: 0, Ord: 1, Text: "a1", Tokens: 4},
			{ID: 2, PageID: 1, Ord: 0, Text: "b0", Tokens: 5},
		},
	}
}

func TestWritePlan(t *testing.T) {
	plan := WritePlan(smallIndex(), 2)
	var kinds []string
	for _, st := range plan {
		kinds = append(kinds, statementKind(st.Cypher))
	}
	// 3 pages and 3 chunks in batches of 2: two statements per kind; deletes first, links last.
	want := []string{"delete", "trim", "trim", "release page", "release page", "release chunk", "release chunk",
		"merge page", "merge page", "merge chunk", "merge chunk", "links", "links"}
	if diff := cmp.Diff(want, kinds); diff != "" {
		t.Fatalf("statement order (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]any{"urls": []string{"https://x.edu/a", "https://x.edu/b", "https://x.edu/c"}}, plan[0].Params); diff != "" {
		t.Errorf("delete params (-want +got):\n%s", diff)
	}
	wantPages := []any{
		map[string]any{"url": "https://x.edu/a", "page_id": int64(0), "title": "A", "summary": "sa", "section": "", "hash": "ha", "community_id": int64(5)},
		map[string]any{"url": "https://x.edu/b", "page_id": int64(1), "title": "B", "summary": "sb", "section": "/en/", "hash": "hb", "community_id": int64(5)},
		map[string]any{"url": "https://x.edu/c", "page_id": int64(2), "title": "C", "summary": "sc", "section": "", "hash": "hc", "community_id": int64(9999)},
	}
	if diff := cmp.Diff(wantPages, concatRows(plan[7:9])); diff != "" {
		t.Errorf("page rows (-want +got):\n%s", diff)
	}
	wantChunks := []any{
		map[string]any{"url": "https://x.edu/a", "chunk_number": int64(0), "chunk_id": int64(0), "content": "a0", "tokens": int64(3)},
		map[string]any{"url": "https://x.edu/a", "chunk_number": int64(1), "chunk_id": int64(1), "content": "a1", "tokens": int64(4)},
		map[string]any{"url": "https://x.edu/b", "chunk_number": int64(0), "chunk_id": int64(2), "content": "b0", "tokens": int64(5)},
	}
	if diff := cmp.Diff(wantChunks, concatRows(plan[9:11])); diff != "" {
		t.Errorf("chunk rows (-want +got):\n%s", diff)
	}
	wantTrims := []any{
		map[string]any{"url": "https://x.edu/a", "chunks": int64(2)},
		map[string]any{"url": "https://x.edu/b", "chunks": int64(1)},
		map[string]any{"url": "https://x.edu/c", "chunks": int64(0)},
	}
	if diff := cmp.Diff(wantTrims, concatRows(plan[1:3])); diff != "" {
		t.Errorf("trim rows (-want +got):\n%s", diff)
	}
	wantLinks := []any{
		map[string]any{"url": "https://x.edu/a", "links": []string{"https://x.edu/b", "https://x.edu/c"}},
		map[string]any{"url": "https://x.edu/b", "links": []string{"https://x.edu/a"}},
		map[string]any{"url": "https://x.edu/c", "links": []string{}},
	}
	if diff := cmp.Diff(wantLinks, concatRows(plan[11:13])); diff != "" {
		t.Errorf("link rows (-want +got):\n%s", diff)
	}
}

func TestWritePlanEmptyIndex(t *testing.T) {
	plan := WritePlan(&index.Index{}, 100)
	if len(plan) != 1 || statementKind(plan[0].Cypher) != "delete" {
		t.Fatalf("plan for an empty index = %+v, want one delete", plan)
	}
	if diff := cmp.Diff(map[string]any{"urls": []string{}}, plan[0].Params); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestWritePlanKeepsDataOutOfCypher checks that hostile page content only ever travels as parameters and that
// every parameter is a type Bolt can carry.
func TestWritePlanKeepsDataOutOfCypher(t *testing.T) {
	ix := smallIndex()
	evil := "x'}) DETACH DELETE n //"
	ix.Pages[0].URL = "https://x.edu/" + evil
	ix.Pages[1].Title = evil
	ix.Chunks[0].Text = "`" + evil
	for i, st := range WritePlan(ix, 1) {
		if strings.Contains(st.Cypher, evil) || strings.Contains(st.Cypher, "https://") {
			t.Errorf("statement %d embeds data in its text:\n%s", i, st.Cypher)
		}
		if err := boltTypes(st.Params); err != nil {
			t.Errorf("statement %d: %v", i, err)
		}
	}
}

func boltTypes(v any) error {
	switch x := v.(type) {
	case nil, string, int64, bool, float64, []string, []int64:
		return nil
	case []any:
		for _, e := range x {
			if err := boltTypes(e); err != nil {
				return err
			}
		}
		return nil
	case map[string]any:
		for k, e := range x {
			if err := boltTypes(e); err != nil {
				return fmt.Errorf("%s: %w", k, err)
			}
		}
		return nil
	}
	return fmt.Errorf("parameter of type %T", v)
}

func statementKind(cypher string) string {
	for _, k := range []struct{ marker, kind string }{
		{"DETACH DELETE c, p", "delete"},
		{"c.chunk_number >= row.chunks", "trim"},
		{"REMOVE p.page_id", "release page"},
		{"REMOVE c.chunk_id", "release chunk"},
		{"MERGE (p:Page", "merge page"},
		{"MERGE (p)-[:HAS_CHUNK]", "merge chunk"},
		{"MERGE (p)-[:LINKS_TO]", "links"},
	} {
		if strings.Contains(cypher, k.marker) {
			return k.kind
		}
	}
	return "unknown: " + cypher
}

func concatRows(sts []Statement) []any {
	var out []any
	for _, st := range sts {
		out = append(out, st.Params["rows"].([]any)...)
	}
	return out
}

func TestConfigRedacted(t *testing.T) {
	c := Config{URI: "neo4j://admin:pw@db:7687", User: "neo4j", Password: "secret"}.Redacted()
	if strings.Contains(fmt.Sprint(c), "secret") || strings.Contains(c.URI, "pw") {
		t.Errorf("Redacted() = %+v still shows a secret", c)
	}
}

func TestNewRejectsBadURI(t *testing.T) {
	if _, err := New(Config{URI: "mysql://db:3306", User: "neo4j", Password: "secret"}); err == nil || strings.Contains(err.Error(), "secret") {
		t.Errorf("New with a bad scheme = %v; want an error without the password", err)
	}
}
