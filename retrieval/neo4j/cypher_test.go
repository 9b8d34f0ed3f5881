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
		{"versions", VersionsQuery(), Statement{
			Cypher: "MATCH (v:IndexVersion)\nRETURN v.version AS version ORDER BY v.seq DESC",
		}},
		{"fingerprints", FingerprintsQuery("v1"), Statement{
			Cypher: "MATCH (p:Page {version: $version})\nRETURN p.url AS url, p.fingerprint AS fingerprint",
			Params: map[string]any{"version": "v1"},
		}},
		{"merge pages", MergePages("v2", rows), Statement{
			Cypher: "UNWIND $rows AS row\nMERGE (p:Page {url: row.url, version: $version})\nSET p.page_id = row.page_id, p.title = row.title, p.summary = row.summary, p.section = row.section,\n    p.hash = row.hash, p.community_id = row.community_id, p.fingerprint = row.fingerprint",
			Params: map[string]any{"version": "v2", "rows": rows},
		}},
		{"merge chunks", MergeChunks("v2", rows), Statement{
			Cypher: "UNWIND $rows AS row\nMATCH (p:Page {url: row.url, version: $version})\nMERGE (p)-[:HAS_CHUNK]->(c:Chunk {chunk_number: row.chunk_number, version: $version})\nSET c.chunk_id = row.chunk_id, c.content = row.content, c.tokens = row.tokens",
			Params: map[string]any{"version": "v2", "rows": rows},
		}},
		{"copy pages", CopyPages("v1", "v2", rows), Statement{
			Cypher: "UNWIND $rows AS row\nMATCH (old:Page {url: row.url, version: $from})\nMERGE (p:Page {url: row.url, version: $version})\n" +
				"SET p.page_id = row.page_id, p.title = old.title, p.summary = old.summary, p.section = row.section,\n" +
				"    p.hash = old.hash, p.community_id = row.community_id, p.fingerprint = old.fingerprint\n" +
				"WITH p, old, row\nMATCH (old)-[:HAS_CHUNK]->(oc:Chunk)\n" +
				"MERGE (p)-[:HAS_CHUNK]->(c:Chunk {chunk_number: oc.chunk_number, version: $version})\n" +
				"SET c.chunk_id = row.chunk_ids[oc.chunk_number], c.content = oc.content, c.tokens = oc.tokens",
			Params: map[string]any{"from": "v1", "version": "v2", "rows": rows},
		}},
		{"replace links", ReplaceLinks("v2", rows), Statement{
			Cypher: "UNWIND $rows AS row\nMATCH (p:Page {url: row.url, version: $version})\nOPTIONAL MATCH (p)-[old:LINKS_TO]->(:Page)\nDELETE old\nWITH DISTINCT p, row\nUNWIND row.links AS target\nMATCH (q:Page {url: target, version: $version})\nMERGE (p)-[:LINKS_TO]->(q)",
			Params: map[string]any{"version": "v2", "rows": rows},
		}},
		{"mark version", MarkVersion("v2"), Statement{
			Cypher: "MERGE (v:IndexVersion {version: $version})\nWITH v\nOPTIONAL MATCH (o:IndexVersion) WHERE o <> v\nWITH v, coalesce(max(o.seq), 0) AS top\nSET v.seq = CASE WHEN v.seq > top THEN v.seq ELSE top + 1 END",
			Params: map[string]any{"version": "v2"},
		}},
		{"prune nodes", PruneNodes(2, 500), Statement{
			Cypher: "OPTIONAL MATCH (v:IndexVersion)\nWITH v ORDER BY v.seq DESC\nWITH collect(v.version)[..$keep] AS kept\nMATCH (n) WHERE (n:Page OR n:Chunk) AND (n.version IS NULL OR NOT n.version IN kept)\nWITH n LIMIT $limit\nDETACH DELETE n\nRETURN count(*) AS deleted",
			Params: map[string]any{"keep": int64(2), "limit": int64(500)},
		}},
		{"prune versions", PruneVersions(2), Statement{
			Cypher: "MATCH (v:IndexVersion)\nWITH v ORDER BY v.seq DESC SKIP $keep\nWITH v, v.version AS version\nDELETE v\nRETURN version",
			Params: map[string]any{"keep": int64(2)},
		}},
		{"communities", CommunitiesQuery("v1", []int{3, 1}), Statement{
			Cypher: "MATCH (p:Page {version: $version}) WHERE p.page_id IN $ids\nRETURN p.page_id AS page_id, p.community_id AS community_id",
			Params: map[string]any{"version": "v1", "ids": []int64{3, 1}},
		}},
		{"neighbours", NeighboursQuery("v1", 7), Statement{
			Cypher: "MATCH (:Page {page_id: $id, version: $version})-[:LINKS_TO]-(q:Page)\nRETURN DISTINCT q.page_id AS page_id ORDER BY page_id",
			Params: map[string]any{"version": "v1", "id": int64(7)},
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
		"DROP CONSTRAINT page_url IF EXISTS",
		"DROP CONSTRAINT page_id IF EXISTS",
		"DROP CONSTRAINT chunk_id IF EXISTS",
		"CREATE CONSTRAINT page_url_version IF NOT EXISTS FOR (p:Page) REQUIRE (p.url, p.version) IS UNIQUE",
		"CREATE CONSTRAINT page_id_version IF NOT EXISTS FOR (p:Page) REQUIRE (p.page_id, p.version) IS UNIQUE",
		"CREATE CONSTRAINT chunk_id_version IF NOT EXISTS FOR (c:Chunk) REQUIRE (c.chunk_id, c.version) IS UNIQUE",
		"CREATE CONSTRAINT index_version IF NOT EXISTS FOR (v:IndexVersion) REQUIRE v.version IS UNIQUE",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// smallIndex is version v1 of three pages: a links to b and c, b links to a; a has two chunks, b one, c none.
func smallIndex() *index.Index {
	return &index.Index{
		Manifest: index.Manifest{Version: "v1"},
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

func kinds(plan []Statement) []string {
	var out []string
	for _, st := range plan {
		out = append(out, statementKind(st.Cypher))
	}
	return out
}

func TestWritePlan(t *testing.T) {
	ix := smallIndex()
	plan, copied := WritePlan(ix, Previous{}, 2)
	// 3 pages and 3 chunks in batches of 2: two statements per kind, links after every page exists, the mark
	// last.
	want := []string{"merge page", "merge page", "merge chunk", "merge chunk", "links", "links", "mark"}
	if diff := cmp.Diff(want, kinds(plan)); diff != "" {
		t.Fatalf("statement order (-want +got):\n%s", diff)
	}
	if copied != 0 {
		t.Errorf("copied = %d without a previous version", copied)
	}
	for i, st := range plan {
		if st.Params["version"] != "v1" {
			t.Errorf("statement %d writes version %v, want v1", i, st.Params["version"])
		}
	}
	fp := func(i int) string { return Fingerprint(ix, &ix.Pages[i]) }
	wantPages := []any{
		map[string]any{"url": "https://x.edu/a", "page_id": int64(0), "title": "A", "summary": "sa", "section": "", "hash": "ha", "community_id": int64(5), "fingerprint": fp(0)},
		map[string]any{"url": "https://x.edu/b", "page_id": int64(1), "title": "B", "summary": "sb", "section": "/en/", "hash": "hb", "community_id": int64(5), "fingerprint": fp(1)},
		map[string]any{"url": "https://x.edu/c", "page_id": int64(2), "title": "C", "summary": "sc", "section": "", "hash": "hc", "community_id": int64(9999), "fingerprint": fp(2)},
	}
	if diff := cmp.Diff(wantPages, concatRows(plan[0:2])); diff != "" {
		t.Errorf("page rows (-want +got):\n%s", diff)
	}
	wantChunks := []any{
		map[string]any{"url": "https://x.edu/a", "chunk_number": int64(0), "chunk_id": int64(0), "content": "a0", "tokens": int64(3)},
		map[string]any{"url": "https://x.edu/a", "chunk_number": int64(1), "chunk_id": int64(1), "content": "a1", "tokens": int64(4)},
		map[string]any{"url": "https://x.edu/b", "chunk_number": int64(0), "chunk_id": int64(2), "content": "b0", "tokens": int64(5)},
	}
	if diff := cmp.Diff(wantChunks, concatRows(plan[2:4])); diff != "" {
		t.Errorf("chunk rows (-want +got):\n%s", diff)
	}
	wantLinks := []any{
		map[string]any{"url": "https://x.edu/a", "links": []string{"https://x.edu/b", "https://x.edu/c"}},
		map[string]any{"url": "https://x.edu/b", "links": []string{"https://x.edu/a"}},
		map[string]any{"url": "https://x.edu/c", "links": []string{}},
	}
	if diff := cmp.Diff(wantLinks, concatRows(plan[4:6])); diff != "" {
		t.Errorf("link rows (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(MarkVersion("v1"), plan[6]); diff != "" {
		t.Errorf("last statement (-want +got):\n%s", diff)
	}
}

// TestWritePlanCopies checks that a page unchanged since the previous version is copied inside the server
// with its new labels, and only the changed pages travel with their content.
func TestWritePlanCopies(t *testing.T) {
	v1 := smallIndex()
	prev := Previous{Version: "v1", Fingerprints: map[string]string{}}
	for i := range v1.Pages {
		prev.Fingerprints[v1.Pages[i].URL] = Fingerprint(v1, &v1.Pages[i])
	}
	// v2: b's chunk text changes; a moves to another community; c is unchanged.
	v2 := smallIndex()
	v2.Manifest.Version = "v2"
	v2.Chunks[2].Text = "b0 changed"
	v2.Pages[0].Community = 6
	plan, copied := WritePlan(v2, prev, 10)
	if diff := cmp.Diff([]string{"copy", "merge page", "merge chunk", "links", "mark"}, kinds(plan)); diff != "" {
		t.Fatalf("statement order (-want +got):\n%s", diff)
	}
	if copied != 2 {
		t.Errorf("copied = %d, want 2 (a and c)", copied)
	}
	if diff := cmp.Diff(map[string]any{"from": "v1", "version": "v2"}, map[string]any{"from": plan[0].Params["from"], "version": plan[0].Params["version"]}); diff != "" {
		t.Errorf("copy versions (-want +got):\n%s", diff)
	}
	wantCopies := []any{
		map[string]any{"url": "https://x.edu/a", "page_id": int64(0), "section": "", "community_id": int64(6), "chunk_ids": []int64{0, 1}},
		map[string]any{"url": "https://x.edu/c", "page_id": int64(2), "section": "", "community_id": int64(9999), "chunk_ids": []int64{}},
	}
	if diff := cmp.Diff(wantCopies, concatRows(plan[0:1])); diff != "" {
		t.Errorf("copy rows (-want +got):\n%s", diff)
	}
	if got := concatRows(plan[1:2]); len(got) != 1 || got[0].(map[string]any)["url"] != "https://x.edu/b" {
		t.Errorf("written pages = %v, want only b", got)
	}
	if got := concatRows(plan[2:3]); len(got) != 1 || got[0].(map[string]any)["content"] != "b0 changed" {
		t.Errorf("written chunks = %v, want only b's new chunk", got)
	}

	// Re-writing v1 itself never copies from v1.
	if _, copied := WritePlan(v1, prev, 10); copied != 0 {
		t.Errorf("a version copied %d pages from itself", copied)
	}
}

func TestWritePlanEmptyIndex(t *testing.T) {
	plan, _ := WritePlan(&index.Index{Manifest: index.Manifest{Version: "v0"}}, Previous{}, 100)
	if diff := cmp.Diff([]string{"mark"}, kinds(plan)); diff != "" {
		t.Errorf("plan for an empty index (-want +got):\n%s", diff)
	}
}

// TestWritePlanKeepsDataOutOfCypher checks that hostile page content only ever travels as parameters and that
// every parameter is a type Bolt can carry, on both the write and the copy path.
func TestWritePlanKeepsDataOutOfCypher(t *testing.T) {
	ix := smallIndex()
	evil := "x'}) DETACH DELETE n //"
	ix.Manifest.Version = evil
	ix.Pages[0].URL = "https://x.edu/" + evil
	ix.Pages[1].Title = evil
	ix.Chunks[0].Text = "`" + evil
	prev := Previous{Version: "old" + evil, Fingerprints: map[string]string{ix.Pages[1].URL: Fingerprint(ix, &ix.Pages[1])}}
	plan, _ := WritePlan(ix, prev, 1)
	plan = append(plan, PruneNodes(2, 10), PruneVersions(2), CommunitiesQuery(evil, []int{1}), NeighboursQuery(evil, 1), FingerprintsQuery(evil))
	for i, st := range plan {
		if strings.Contains(st.Cypher, evil) || strings.Contains(st.Cypher, "https://") {
			t.Errorf("statement %d embeds data in its text:\n%s", i, st.Cypher)
		}
		if err := boltTypes(st.Params); err != nil {
			t.Errorf("statement %d: %v", i, err)
		}
	}
}

func TestFingerprint(t *testing.T) {
	ix := smallIndex()
	base := Fingerprint(ix, &ix.Pages[0])
	relabelled := smallIndex()
	relabelled.Pages[0].ID, relabelled.Pages[0].Community, relabelled.Pages[0].Section = 9, 1, "/x/"
	if Fingerprint(relabelled, &relabelled.Pages[0]) != base {
		t.Error("labels changed the fingerprint; a relabelled page would not be copied")
	}
	for name, change := range map[string]func(*index.Index){
		"summary":     func(ix *index.Index) { ix.Pages[0].Summary = "new" },
		"chunk text":  func(ix *index.Index) { ix.Chunks[1].Text = "new" },
		"chunk count": func(ix *index.Index) { ix.Pages[0].Chunks = ix.Pages[0].Chunks[:1] },
		"hash":        func(ix *index.Index) { ix.Pages[0].Hash = "new" },
	} {
		ix := smallIndex()
		change(ix)
		if Fingerprint(ix, &ix.Pages[0]) == base {
			t.Errorf("a changed %s kept the fingerprint", name)
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
		{"MATCH (old:Page", "copy"},
		{"MERGE (p:Page", "merge page"},
		{"MERGE (p)-[:HAS_CHUNK]", "merge chunk"},
		{"MERGE (p)-[:LINKS_TO]", "links"},
		{"MERGE (v:IndexVersion", "mark"},
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
