// Package neo4j keeps ragproxy's page graph in Neo4j, for deployments that outgrow the in-process graph:
// Page nodes (url, page_id, title, summary, section, hash, community_id), Chunk nodes (chunk_id,
// chunk_number, content, tokens), HAS_CHUNK from a page to its chunks and LINKS_TO between pages. Ingest
// writes the graph with Write; retrieval reads community ids and neighbourhoods. Communities are computed by
// ragproxy and stored as a property, so no graph-algorithm plugin is needed.
//
// Every statement is built by a small pure function returning Cypher text and parameters (data never goes
// into the text), so each can be tested without a server. A Store is safe for concurrent use.
package neo4j

import "github.com/ragproxy/ragproxy/index"

// Statement is one Cypher statement with its parameters.
type Statement struct {
	Cypher string
	Params map[string]any
}

// Constraints returns the uniqueness constraints the graph relies on: Page.url (the identity that survives
// re-ingests), Page.page_id and Chunk.chunk_id (the positions retrieval looks pages and chunks up by). They
// are idempotent.
func Constraints() []Statement {
	return []Statement{
		{Cypher: "CREATE CONSTRAINT page_url IF NOT EXISTS FOR (p:Page) REQUIRE p.url IS UNIQUE"},
		{Cypher: "CREATE CONSTRAINT page_id IF NOT EXISTS FOR (p:Page) REQUIRE p.page_id IS UNIQUE"},
		{Cypher: "CREATE CONSTRAINT chunk_id IF NOT EXISTS FOR (c:Chunk) REQUIRE c.chunk_id IS UNIQUE"},
	}
}

// DeleteMissingPages deletes the pages whose URL is not in urls, with their chunks and relationships.
func DeleteMissingPages(urls []string) Statement {
	return Statement{
		Cypher: `MATCH (p:Page) WHERE NOT p.url IN $urls
OPTIONAL MATCH (p)-[:HAS_CHUNK]->(c:Chunk)
DETACH DELETE c, p`,
		Params: map[string]any{"urls": urls},
	}
}

// TrimChunks deletes the chunks of each page from position chunks on (rows: url, chunks), for pages that
// now have fewer chunks than before.
func TrimChunks(rows []any) Statement {
	return Statement{
		Cypher: `UNWIND $rows AS row
MATCH (:Page {url: row.url})-[:HAS_CHUNK]->(c:Chunk)
WHERE c.chunk_number >= row.chunks
DETACH DELETE c`,
		Params: map[string]any{"rows": rows},
	}
}

// ReleasePageIDs removes page_id from pages whose id is about to change (rows: url, page_id). Ids are
// positions, so a re-ingest can swap two pages' ids; setting them directly would trip the uniqueness
// constraint on the first page written.
func ReleasePageIDs(rows []any) Statement {
	return Statement{
		Cypher: `UNWIND $rows AS row
MATCH (p:Page {url: row.url})
WHERE p.page_id <> row.page_id
REMOVE p.page_id`,
		Params: map[string]any{"rows": rows},
	}
}

// ReleaseChunkIDs is ReleasePageIDs for chunks (rows: url, chunk_number, chunk_id).
func ReleaseChunkIDs(rows []any) Statement {
	return Statement{
		Cypher: `UNWIND $rows AS row
MATCH (:Page {url: row.url})-[:HAS_CHUNK]->(c:Chunk {chunk_number: row.chunk_number})
WHERE c.chunk_id <> row.chunk_id
REMOVE c.chunk_id`,
		Params: map[string]any{"rows": rows},
	}
}

// MergePages creates or updates Page nodes by URL (rows: url, page_id, title, summary, section, hash,
// community_id).
func MergePages(rows []any) Statement {
	return Statement{
		Cypher: `UNWIND $rows AS row
MERGE (p:Page {url: row.url})
SET p.page_id = row.page_id, p.title = row.title, p.summary = row.summary, p.section = row.section,
    p.hash = row.hash, p.community_id = row.community_id`,
		Params: map[string]any{"rows": rows},
	}
}

// MergeChunks creates or updates each page's chunks by position, with HAS_CHUNK (rows: url, chunk_number,
// chunk_id, content, tokens). The pages must exist.
func MergeChunks(rows []any) Statement {
	return Statement{
		Cypher: `UNWIND $rows AS row
MATCH (p:Page {url: row.url})
MERGE (p)-[:HAS_CHUNK]->(c:Chunk {chunk_number: row.chunk_number})
SET c.chunk_id = row.chunk_id, c.content = row.content, c.tokens = row.tokens`,
		Params: map[string]any{"rows": rows},
	}
}

// ReplaceLinks makes each page's outgoing LINKS_TO exactly the pages listed (rows: url, links as URLs).
// Targets must exist; links to unknown URLs are dropped.
func ReplaceLinks(rows []any) Statement {
	return Statement{
		Cypher: `UNWIND $rows AS row
MATCH (p:Page {url: row.url})
OPTIONAL MATCH (p)-[old:LINKS_TO]->(:Page)
DELETE old
WITH DISTINCT p, row
UNWIND row.links AS target
MATCH (q:Page {url: target})
MERGE (p)-[:LINKS_TO]->(q)`,
		Params: map[string]any{"rows": rows},
	}
}

// CommunitiesQuery reads the community id of each page in pageIDs.
func CommunitiesQuery(pageIDs []int) Statement {
	ids := make([]int64, len(pageIDs))
	for i, id := range pageIDs {
		ids[i] = int64(id)
	}
	return Statement{
		Cypher: `MATCH (p:Page) WHERE p.page_id IN $ids
RETURN p.page_id AS page_id, p.community_id AS community_id`,
		Params: map[string]any{"ids": ids},
	}
}

// NeighboursQuery reads the ids of the pages linked to or from a page, ascending.
func NeighboursQuery(pageID int) Statement {
	return Statement{
		Cypher: `MATCH (:Page {page_id: $id})-[:LINKS_TO]-(q:Page)
RETURN DISTINCT q.page_id AS page_id ORDER BY page_id`,
		Params: map[string]any{"id": int64(pageID)},
	}
}

// WritePlan returns the statements that make the graph match ix, in order, with rows in batches of at most
// batch. Pages that disappeared are deleted first and ids that move are released before any is set, so
// every statement respects the uniqueness constraints; links come last, when every target exists.
func WritePlan(ix *index.Index, batch int) []Statement {
	if batch <= 0 {
		batch = 1
	}
	var pages, trims, pageIDs, chunkIDs, chunks, links []any
	urls := make([]string, len(ix.Pages))
	for i := range ix.Pages {
		p := &ix.Pages[i]
		urls[i] = p.URL
		id := int64(p.ID)
		pages = append(pages, map[string]any{
			"url": p.URL, "page_id": id, "title": p.Title, "summary": p.Summary, "section": p.Section,
			"hash": p.Hash, "community_id": int64(p.Community),
		})
		trims = append(trims, map[string]any{"url": p.URL, "chunks": int64(len(p.Chunks))})
		pageIDs = append(pageIDs, map[string]any{"url": p.URL, "page_id": id})
		for _, cid := range p.Chunks {
			if cid < 0 || cid >= len(ix.Chunks) {
				continue
			}
			c := &ix.Chunks[cid]
			chunkIDs = append(chunkIDs, map[string]any{"url": p.URL, "chunk_number": int64(c.Ord), "chunk_id": int64(c.ID)})
			chunks = append(chunks, map[string]any{
				"url": p.URL, "chunk_number": int64(c.Ord), "chunk_id": int64(c.ID), "content": c.Text, "tokens": int64(c.Tokens),
			})
		}
		targets := make([]string, 0, len(p.Links))
		for _, l := range p.Links {
			if l >= 0 && l < len(ix.Pages) {
				targets = append(targets, ix.Pages[l].URL)
			}
		}
		links = append(links, map[string]any{"url": p.URL, "links": targets})
	}
	plan := []Statement{DeleteMissingPages(urls)}
	plan = appendBatched(plan, trims, batch, TrimChunks)
	plan = appendBatched(plan, pageIDs, batch, ReleasePageIDs)
	plan = appendBatched(plan, chunkIDs, batch, ReleaseChunkIDs)
	plan = appendBatched(plan, pages, batch, MergePages)
	plan = appendBatched(plan, chunks, batch, MergeChunks)
	plan = appendBatched(plan, links, batch, ReplaceLinks)
	return plan
}

func appendBatched(plan []Statement, rows []any, batch int, build func([]any) Statement) []Statement {
	for start := 0; start < len(rows); start += batch {
		plan = append(plan, build(rows[start:min(start+batch, len(rows))]))
	}
	return plan
}
