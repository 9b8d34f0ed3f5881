// Package neo4j keeps ragproxy's page graph in Neo4j, for deployments that outgrow the in-process graph:
// Page nodes (url, page_id, title, summary, section, hash, community_id, fingerprint), Chunk nodes (chunk_id,
// chunk_number, content, tokens), HAS_CHUNK from a page to its chunks and LINKS_TO between pages. Ingest
// writes the graph with Write; retrieval reads community ids and neighbourhoods. Communities are computed by
// ragproxy and stored as a property, so no graph-algorithm plugin is needed.
//
// Every Page and Chunk node carries the index version it belongs to (property version), and each version has
// its own nodes: Write adds a version's graph next to the ones servers are reading, and a server reads only
// the version it loaded (Store.Graph). An IndexVersion node per written version records the order of writes
// (seq); after a write, the nodes of versions beyond the newest Config.KeepVersions are deleted, as are nodes
// without a version (written by releases before versions).
//
// Every statement is built by a small pure function returning Cypher text and parameters (data never goes
// into the text), so each can be tested without a server. A Store is safe for concurrent use.
package neo4j

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/ragproxy/ragproxy/index"
)

// Statement is one Cypher statement with its parameters.
type Statement struct {
	Cypher string
	Params map[string]any
}

// Constraints returns the schema the graph relies on, idempotently: it drops the single-property uniqueness
// constraints of releases before versions (they would refuse a second version of a page), then requires
// (url, version) and (page_id, version) unique among pages, (chunk_id, version) among chunks, and version
// among IndexVersion nodes.
func Constraints() []Statement {
	return []Statement{
		{Cypher: "DROP CONSTRAINT page_url IF EXISTS"},
		{Cypher: "DROP CONSTRAINT page_id IF EXISTS"},
		{Cypher: "DROP CONSTRAINT chunk_id IF EXISTS"},
		{Cypher: "CREATE CONSTRAINT page_url_version IF NOT EXISTS FOR (p:Page) REQUIRE (p.url, p.version) IS UNIQUE"},
		{Cypher: "CREATE CONSTRAINT page_id_version IF NOT EXISTS FOR (p:Page) REQUIRE (p.page_id, p.version) IS UNIQUE"},
		{Cypher: "CREATE CONSTRAINT chunk_id_version IF NOT EXISTS FOR (c:Chunk) REQUIRE (c.chunk_id, c.version) IS UNIQUE"},
		{Cypher: "CREATE CONSTRAINT index_version IF NOT EXISTS FOR (v:IndexVersion) REQUIRE v.version IS UNIQUE"},
	}
}

// VersionsQuery reads the versions marked written, newest first.
func VersionsQuery() Statement {
	return Statement{Cypher: `MATCH (v:IndexVersion)
RETURN v.version AS version ORDER BY v.seq DESC`}
}

// FingerprintsQuery reads the url and fingerprint of every page of a version.
func FingerprintsQuery(version string) Statement {
	return Statement{
		Cypher: `MATCH (p:Page {version: $version})
RETURN p.url AS url, p.fingerprint AS fingerprint`,
		Params: map[string]any{"version": version},
	}
}

// MergePages creates or updates the Page nodes of a version by URL (rows: url, page_id, title, summary,
// section, hash, community_id, fingerprint).
func MergePages(version string, rows []any) Statement {
	return Statement{
		Cypher: `UNWIND $rows AS row
MERGE (p:Page {url: row.url, version: $version})
SET p.page_id = row.page_id, p.title = row.title, p.summary = row.summary, p.section = row.section,
    p.hash = row.hash, p.community_id = row.community_id, p.fingerprint = row.fingerprint`,
		Params: map[string]any{"version": version, "rows": rows},
	}
}

// MergeChunks creates or updates each page's chunks by position, with HAS_CHUNK (rows: url, chunk_number,
// chunk_id, content, tokens). The version's pages must exist.
func MergeChunks(version string, rows []any) Statement {
	return Statement{
		Cypher: `UNWIND $rows AS row
MATCH (p:Page {url: row.url, version: $version})
MERGE (p)-[:HAS_CHUNK]->(c:Chunk {chunk_number: row.chunk_number, version: $version})
SET c.chunk_id = row.chunk_id, c.content = row.content, c.tokens = row.tokens`,
		Params: map[string]any{"version": version, "rows": rows},
	}
}

// CopyPages creates pages of version from the same pages of version from, inside the server, so unchanged
// content (summaries and chunk texts) is not sent again (rows: url, page_id, section, community_id, and
// chunk_ids, the new chunk id of each chunk by position). Only the labels come from the rows.
func CopyPages(from, version string, rows []any) Statement {
	return Statement{
		Cypher: `UNWIND $rows AS row
MATCH (old:Page {url: row.url, version: $from})
MERGE (p:Page {url: row.url, version: $version})
SET p.page_id = row.page_id, p.title = old.title, p.summary = old.summary, p.section = row.section,
    p.hash = old.hash, p.community_id = row.community_id, p.fingerprint = old.fingerprint
WITH p, old, row
MATCH (old)-[:HAS_CHUNK]->(oc:Chunk)
MERGE (p)-[:HAS_CHUNK]->(c:Chunk {chunk_number: oc.chunk_number, version: $version})
SET c.chunk_id = row.chunk_ids[oc.chunk_number], c.content = oc.content, c.tokens = oc.tokens`,
		Params: map[string]any{"from": from, "version": version, "rows": rows},
	}
}

// ReplaceLinks makes each page's outgoing LINKS_TO within its version exactly the pages listed (rows: url,
// links as URLs). Targets must exist; links to unknown URLs are dropped.
func ReplaceLinks(version string, rows []any) Statement {
	return Statement{
		Cypher: `UNWIND $rows AS row
MATCH (p:Page {url: row.url, version: $version})
OPTIONAL MATCH (p)-[old:LINKS_TO]->(:Page)
DELETE old
WITH DISTINCT p, row
UNWIND row.links AS target
MATCH (q:Page {url: target, version: $version})
MERGE (p)-[:LINKS_TO]->(q)`,
		Params: map[string]any{"version": version, "rows": rows},
	}
}

// MarkVersion records that version is completely written and is the newest: its IndexVersion node gets a
// seq above every other's (kept when it is the newest already, so re-writing the current version changes
// nothing).
func MarkVersion(version string) Statement {
	return Statement{
		Cypher: `MERGE (v:IndexVersion {version: $version})
WITH v
OPTIONAL MATCH (o:IndexVersion) WHERE o <> v
WITH v, coalesce(max(o.seq), 0) AS top
SET v.seq = CASE WHEN v.seq > top THEN v.seq ELSE top + 1 END`,
		Params: map[string]any{"version": version},
	}
}

// PruneNodes deletes up to limit Page and Chunk nodes that belong to no kept version: versions beyond the
// newest keep by seq, versions never marked written (an interrupted Write), and nodes without a version. It
// returns the number deleted as "deleted"; run it until that is below limit.
func PruneNodes(keep, limit int) Statement {
	return Statement{
		Cypher: `OPTIONAL MATCH (v:IndexVersion)
WITH v ORDER BY v.seq DESC
WITH collect(v.version)[..$keep] AS kept
MATCH (n) WHERE (n:Page OR n:Chunk) AND (n.version IS NULL OR NOT n.version IN kept)
WITH n LIMIT $limit
DETACH DELETE n
RETURN count(*) AS deleted`,
		Params: map[string]any{"keep": int64(keep), "limit": int64(limit)},
	}
}

// PruneVersions deletes the IndexVersion nodes beyond the newest keep and returns their versions as
// "version".
func PruneVersions(keep int) Statement {
	return Statement{
		Cypher: `MATCH (v:IndexVersion)
WITH v ORDER BY v.seq DESC SKIP $keep
WITH v, v.version AS version
DELETE v
RETURN version`,
		Params: map[string]any{"keep": int64(keep)},
	}
}

// CommunitiesQuery reads the community id of each page in pageIDs of a version.
func CommunitiesQuery(version string, pageIDs []int) Statement {
	ids := make([]int64, len(pageIDs))
	for i, id := range pageIDs {
		ids[i] = int64(id)
	}
	return Statement{
		Cypher: `MATCH (p:Page {version: $version}) WHERE p.page_id IN $ids
RETURN p.page_id AS page_id, p.community_id AS community_id`,
		Params: map[string]any{"version": version, "ids": ids},
	}
}

// NeighboursQuery reads the ids of the pages linked to or from a page of a version, ascending.
func NeighboursQuery(version string, pageID int) Statement {
	return Statement{
		Cypher: `MATCH (:Page {page_id: $id, version: $version})-[:LINKS_TO]-(q:Page)
RETURN DISTINCT q.page_id AS page_id ORDER BY page_id`,
		Params: map[string]any{"version": version, "id": int64(pageID)},
	}
}

// Previous is what Write knows of the version it copies unchanged pages from; the zero value copies nothing.
type Previous struct {
	// Version is the version to copy from.
	Version string
	// Fingerprints maps each of its pages' URL to its fingerprint.
	Fingerprints map[string]string
}

// Fingerprint identifies what a page's nodes hold besides its labels (page_id, section, community_id): its
// hash, title, summary and chunks. Write copies a page from the previous version when the fingerprints match.
func Fingerprint(ix *index.Index, p *index.Page) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00%d\x00", p.Hash, p.Title, p.Summary, len(p.Chunks))
	for _, cid := range p.Chunks {
		if cid >= 0 && cid < len(ix.Chunks) {
			c := &ix.Chunks[cid]
			fmt.Fprintf(h, "%d\x00%d\x00%s\x00", c.Ord, c.Tokens, c.Text)
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:32]
}

// WritePlan returns the statements that write ix as version ix.Manifest.Version, in order, with rows in
// batches of at most batch: pages unchanged since prev are copied inside the server, the others written from
// ix, then every page's links (when every target exists), then MarkVersion. It also returns how many pages
// it copies. Pruning older versions follows separately (PruneNodes, PruneVersions). ix must hold its texts in
// memory (see index.Index.Whole).
func WritePlan(ix *index.Index, prev Previous, batch int) (plan []Statement, copied int) {
	if batch <= 0 {
		batch = 1
	}
	version := ix.Manifest.Version
	var pages, chunks, copies, links []any
	for i := range ix.Pages {
		p := &ix.Pages[i]
		id := int64(p.ID)
		fp := Fingerprint(ix, p)
		targets := make([]string, 0, len(p.Links))
		for _, l := range p.Links {
			if l >= 0 && l < len(ix.Pages) {
				targets = append(targets, ix.Pages[l].URL)
			}
		}
		links = append(links, map[string]any{"url": p.URL, "links": targets})
		if prev.Version != "" && prev.Version != version && prev.Fingerprints[p.URL] == fp {
			ids := make([]int64, 0, len(p.Chunks))
			for _, cid := range p.Chunks {
				ids = append(ids, int64(cid))
			}
			copies = append(copies, map[string]any{
				"url": p.URL, "page_id": id, "section": p.Section, "community_id": int64(p.Community), "chunk_ids": ids,
			})
			continue
		}
		pages = append(pages, map[string]any{
			"url": p.URL, "page_id": id, "title": p.Title, "summary": p.Summary, "section": p.Section,
			"hash": p.Hash, "community_id": int64(p.Community), "fingerprint": fp,
		})
		for _, cid := range p.Chunks {
			if cid < 0 || cid >= len(ix.Chunks) {
				continue
			}
			c := &ix.Chunks[cid]
			chunks = append(chunks, map[string]any{
				"url": p.URL, "chunk_number": int64(c.Ord), "chunk_id": int64(c.ID), "content": c.Text, "tokens": int64(c.Tokens),
			})
		}
	}
	plan = appendBatched(plan, copies, batch, func(rows []any) Statement { return CopyPages(prev.Version, version, rows) })
	plan = appendBatched(plan, pages, batch, func(rows []any) Statement { return MergePages(version, rows) })
	plan = appendBatched(plan, chunks, batch, func(rows []any) Statement { return MergeChunks(version, rows) })
	plan = appendBatched(plan, links, batch, func(rows []any) Statement { return ReplaceLinks(version, rows) })
	plan = append(plan, MarkVersion(version))
	return plan, len(copies)
}

func appendBatched(plan []Statement, rows []any, batch int, build func([]any) Statement) []Statement {
	for start := 0; start < len(rows); start += batch {
		plan = append(plan, build(rows[start:min(start+batch, len(rows))]))
	}
	return plan
}
