package backends

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSyncReportLines(t *testing.T) {
	tests := []struct {
		name string
		rep  SyncReport
		want []string
	}{
		{"qdrant next version", SyncReport{Qdrant: &QdrantSync{Version: "b2", Previous: "a1", Summaries: "s_vb2_summaries", Chunks: "s_vb2_chunks",
			Aliases: []string{"s_summaries", "s_chunks"}, PagesWritten: 1, ChunksWritten: 3, PagesCopied: 9, ChunksCopied: 27, PagesRelabelled: 2,
			PagesDeleted: 1, Dropped: []string{"z0"}}},
			[]string{"qdrant s_vb2_summaries, s_vb2_chunks (s_summaries, s_chunks): 1 pages written (3 chunks), 9 copied (27 chunks) from version a1, 2 relabelled, 1 deleted in 0s",
				"qdrant: dropped the collections of versions z0"}},
		{"qdrant migration", SyncReport{Qdrant: &QdrantSync{Version: "b2", Summaries: "s_vb2_summaries", Chunks: "s_vb2_chunks",
			Aliases: []string{"s_summaries", "s_chunks"}, PagesCopied: 4, ChunksCopied: 8, Migrated: true}},
			[]string{"qdrant s_vb2_summaries, s_vb2_chunks (s_summaries, s_chunks): 0 pages written (0 chunks), 4 copied (8 chunks) from the unversioned collections, now deleted, 0 relabelled, 0 deleted in 0s"}},
		{"qdrant current", SyncReport{Qdrant: &QdrantSync{Version: "b2", Previous: "b2", Summaries: "s_vb2_summaries", Chunks: "s_vb2_chunks"}},
			[]string{"qdrant s_vb2_summaries, s_vb2_chunks: version b2 is current already, nothing written in 0s"}},
		{"neo4j next version", SyncReport{Neo4j: &Neo4jSync{Version: "b2", Previous: "a1", Pages: 10, Chunks: 30, Links: 40, PagesWritten: 1, PagesCopied: 9, Dropped: []string{"z0"}}},
			[]string{"neo4j: graph of version b2, 10 pages, 30 chunks, 40 links: 1 pages written, 9 copied from version a1 in 0s",
				"neo4j: deleted the graphs of versions z0"}},
		{"neo4j current", SyncReport{Neo4j: &Neo4jSync{Version: "b2", Pages: 10}},
			[]string{"neo4j: graph of version b2 is the newest written already, nothing written in 0s"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.rep.Lines()); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestConfigRedacted(t *testing.T) {
	c := Config{QdrantURL: "http://q:6334", QdrantKey: "qk-secret", Neo4jURI: "neo4j://n:7687", Neo4jUser: "neo4j", Neo4jPassword: "pw-secret"}
	want := c
	want.QdrantKey, want.Neo4jPassword = "***", "***"
	if diff := cmp.Diff(want, c.Redacted()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(Config{QdrantURL: "http://q:6334"}, Config{QdrantURL: "http://q:6334"}.Redacted()); diff != "" {
		t.Errorf("without secrets nothing is masked (-want +got):\n%s", diff)
	}
}
