package main

import (
	"flag"
	"os"

	"github.com/ragproxy/ragproxy/backends"
)

// backendFlags choose the scale-out stores ingest writes and serve searches: Qdrant for summaries and chunks,
// Neo4j for the page graph. Unset, everything stays in the local index.
type backendFlags struct {
	backends.Config
}

func (b *backendFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&b.QdrantURL, "qdrant-url", envOr("QDRANT_URL", ""), "Qdrant gRPC endpoint, http://host:6334; empty keeps vectors in the local index (QDRANT_URL; key from QDRANT_API_KEY)")
	fs.StringVar(&b.QdrantCollection, "qdrant-collection", envOr("QDRANT_COLLECTION", ""), "Qdrant collection prefix: <name>_v<version>_summaries and _chunks per index version, aliases <name>_summaries and <name>_chunks for the current one; default the index directory's name (QDRANT_COLLECTION)")
	fs.IntVar(&b.KeepVersions, "qdrant-keep-versions", envInt("QDRANT_KEEP_VERSIONS", 2), "index versions whose Qdrant collections (and Neo4j graphs) ingest keeps, the synced one included; servers on older versions fail until they reload (QDRANT_KEEP_VERSIONS)")
	fs.StringVar(&b.Neo4jURI, "neo4j-uri", envOr("NEO4J_URI", ""), "Neo4j URI, neo4j://host:7687; empty keeps the page graph in the local index (NEO4J_URI; password from NEO4J_PASSWORD)")
	fs.StringVar(&b.Neo4jUser, "neo4j-user", envOr("NEO4J_USER", "neo4j"), "Neo4j user (NEO4J_USER)")
	fs.StringVar(&b.Neo4jDatabase, "neo4j-database", envOr("NEO4J_DATABASE", ""), "Neo4j database; default the server's (NEO4J_DATABASE)")
}

// readSecrets takes the keys from the environment only, so they stay out of ps listings.
func (b *backendFlags) readSecrets() {
	b.QdrantKey = os.Getenv("QDRANT_API_KEY")
	b.Neo4jPassword = os.Getenv("NEO4J_PASSWORD")
}
