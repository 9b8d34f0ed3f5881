package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/ragproxy/ragproxy/index"
	"github.com/ragproxy/ragproxy/retrieval"
	"github.com/ragproxy/ragproxy/retrieval/neo4j"
	"github.com/ragproxy/ragproxy/retrieval/qdrant"
)

// backendFlags choose the scale-out stores ingest writes and serve searches: Qdrant for summaries and chunks,
// Neo4j for the page graph. Unset, everything stays in the local index.
type backendFlags struct {
	qdrantURL, qdrantKey, qdrantCollection            string
	neo4jURI, neo4jUser, neo4jPassword, neo4jDatabase string
}

func (b *backendFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&b.qdrantURL, "qdrant-url", envOr("QDRANT_URL", ""), "Qdrant gRPC endpoint, http://host:6334; empty keeps vectors in the local index (QDRANT_URL; key from QDRANT_API_KEY)")
	fs.StringVar(&b.qdrantCollection, "qdrant-collection", envOr("QDRANT_COLLECTION", ""), "Qdrant collection prefix: <name>_summaries and <name>_chunks; default the index directory's name (QDRANT_COLLECTION)")
	fs.StringVar(&b.neo4jURI, "neo4j-uri", envOr("NEO4J_URI", ""), "Neo4j URI, neo4j://host:7687; empty keeps the page graph in the local index (NEO4J_URI; password from NEO4J_PASSWORD)")
	fs.StringVar(&b.neo4jUser, "neo4j-user", envOr("NEO4J_USER", "neo4j"), "Neo4j user (NEO4J_USER)")
	fs.StringVar(&b.neo4jDatabase, "neo4j-database", envOr("NEO4J_DATABASE", ""), "Neo4j database; default the server's (NEO4J_DATABASE)")
}

// readSecrets takes the keys from the environment only, so they stay out of ps listings.
func (b *backendFlags) readSecrets() {
	b.qdrantKey = os.Getenv("QDRANT_API_KEY")
	b.neo4jPassword = os.Getenv("NEO4J_PASSWORD")
}

func (b backendFlags) qdrantConfig(indexDir string) qdrant.Config {
	name := b.qdrantCollection
	if name == "" {
		name = filepath.Base(filepath.Clean(indexDir))
	}
	return qdrant.Config{URL: b.qdrantURL, APIKey: b.qdrantKey, Name: name}
}

func (b backendFlags) neo4jConfig() neo4j.Config {
	return neo4j.Config{URI: b.neo4jURI, User: b.neo4jUser, Password: b.neo4jPassword, Database: b.neo4jDatabase}
}

// syncReport is what ingest wrote into the backends.
type syncReport struct {
	Qdrant *qdrantSync `json:"qdrant,omitempty"`
	Neo4j  *neo4jSync  `json:"neo4j,omitempty"`
}

type qdrantSync struct {
	Summaries       string        `json:"summaries"`
	Chunks          string        `json:"chunks"`
	PagesWritten    int           `json:"pages_written"`
	ChunksWritten   int           `json:"chunks_written"`
	PagesRelabelled int           `json:"pages_relabelled"`
	PagesDeleted    int           `json:"pages_deleted"`
	Duration        time.Duration `json:"duration_ns"`
}

type neo4jSync struct {
	Pages    int           `json:"pages"`
	Chunks   int           `json:"chunks"`
	Links    int           `json:"links"`
	Duration time.Duration `json:"duration_ns"`
}

// lines renders the report for the terminal.
func (r *syncReport) lines() []string {
	var out []string
	if q := r.Qdrant; q != nil {
		out = append(out, fmt.Sprintf("qdrant %s, %s: %d pages written (%d chunks), %d relabelled, %d deleted in %s",
			q.Summaries, q.Chunks, q.PagesWritten, q.ChunksWritten, q.PagesRelabelled, q.PagesDeleted, q.Duration.Round(time.Millisecond)))
	}
	if n := r.Neo4j; n != nil {
		out = append(out, fmt.Sprintf("neo4j: graph of %d pages, %d chunks, %d links written in %s",
			n.Pages, n.Chunks, n.Links, n.Duration.Round(time.Millisecond)))
	}
	return out
}

// configured reports whether any backend is set.
func (b backendFlags) configured() bool { return b.qdrantURL != "" || b.neo4jURI != "" }

// sync writes the index under dir into the configured backends and reports what each wrote, also when a later
// one fails. The local index is written already and stays valid whatever happens here; a failure only means the
// backends lag behind it.
func (b backendFlags) sync(ctx context.Context, dir string) (*syncReport, error) {
	rep := &syncReport{}
	if !b.configured() {
		return rep, nil
	}
	ix, err := index.Load(dir)
	if err != nil {
		return nil, fmt.Errorf("sync backends: %w", err)
	}
	if b.qdrantURL != "" {
		start := time.Now()
		s, err := qdrant.New(b.qdrantConfig(dir))
		if err != nil {
			return nil, fmt.Errorf("sync qdrant: %w", err)
		}
		defer s.Close()
		st, err := s.Upsert(ctx, ix)
		if err != nil {
			return nil, fmt.Errorf("sync qdrant (the local index is written): %w", err)
		}
		sum, ch := s.Collections()
		rep.Qdrant = &qdrantSync{Summaries: sum, Chunks: ch, PagesWritten: st.PagesWritten, ChunksWritten: st.ChunksWritten,
			PagesRelabelled: st.PagesRelabelled, PagesDeleted: st.PagesDeleted, Duration: time.Since(start)}
	}
	if b.neo4jURI != "" {
		start := time.Now()
		s, err := neo4j.New(b.neo4jConfig())
		if err != nil {
			return rep, fmt.Errorf("sync neo4j: %w", err)
		}
		defer s.Close(context.WithoutCancel(ctx))
		if err := s.Write(ctx, ix); err != nil {
			return rep, fmt.Errorf("sync neo4j (the local index is written): %w", err)
		}
		links := 0
		for _, p := range ix.Pages {
			links += len(p.Links)
		}
		rep.Neo4j = &neo4jSync{Pages: len(ix.Pages), Chunks: len(ix.Chunks), Links: links, Duration: time.Since(start)}
	}
	return rep, nil
}

// open connects to the configured backends for serving the index under dir. A server that does not answer
// yet is logged, not fatal: gRPC and the Neo4j driver reconnect, and until then retrieval fails per request.
// The returned func closes the connections.
func (b backendFlags) open(ctx context.Context, dir string, logger *slog.Logger) (retrieval.Backends, func(), error) {
	var (
		bk      retrieval.Backends
		closers []func()
	)
	closeAll := func() {
		for _, c := range closers {
			c()
		}
	}
	if b.qdrantURL != "" {
		cfg := b.qdrantConfig(dir)
		s, err := qdrant.New(cfg)
		if err != nil {
			return bk, nil, fmt.Errorf("serve: --qdrant-url: %w", err)
		}
		closers = append(closers, func() { _ = s.Close() })
		pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		v, err := s.Health(pctx)
		cancel()
		if err != nil {
			logger.Warn("qdrant does not answer; searches fail until it does", "qdrant", cfg.Redacted().URL, "err", err)
		} else {
			sum, ch := s.Collections()
			logger.Info("searching in qdrant", "qdrant", cfg.Redacted().URL, "version", v, "summaries", sum, "chunks", ch)
		}
		bk.Vectors = qdrant.NewSearcher(s)
	}
	if b.neo4jURI != "" {
		cfg := b.neo4jConfig()
		s, err := neo4j.New(cfg)
		if err != nil {
			closeAll()
			return bk, nil, fmt.Errorf("serve: --neo4j-uri: %w", err)
		}
		closers = append(closers, func() { _ = s.Close(context.WithoutCancel(ctx)) })
		pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err = s.Ping(pctx)
		cancel()
		if err != nil {
			logger.Warn("neo4j does not answer; retrieval fails until it does", "neo4j", cfg.Redacted().URI, "err", err)
		} else {
			logger.Info("communities from neo4j", "neo4j", cfg.Redacted().URI)
		}
		bk.Communities = s
	}
	return bk, closeAll, nil
}

// names describes the configured backends for logs and the response cache key.
func (b backendFlags) names() string {
	switch {
	case b.qdrantURL != "" && b.neo4jURI != "":
		return "qdrant+neo4j"
	case b.qdrantURL != "":
		return "qdrant"
	case b.neo4jURI != "":
		return "neo4j"
	}
	return "in-process"
}

// verify warns when the Qdrant that bk searches does not hold the index being served: its searches would then
// fail with a mismatch error (or miss pages) until ingest syncs it.
func (b backendFlags) verify(bk retrieval.Backends, ix *index.Index, logger *slog.Logger) {
	s, ok := bk.Vectors.(*qdrant.Searcher)
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	d, err := s.Verify(ctx, ix)
	switch {
	case err != nil:
		logger.Warn("could not check that qdrant holds the index", "qdrant", b.qdrantURL, "err", err)
	case !d.InSync():
		logger.Warn("qdrant holds another version of the index; searches fail until `ragproxy ingest ... --qdrant-url` syncs it",
			"qdrant", b.qdrantURL, "index_version", ix.Manifest.Version, "missing_pages", d.Missing,
			"stale_pages", d.Stale, "extra_pages", d.Extra)
	default:
		logger.Info("qdrant holds the index", "index_version", ix.Manifest.Version, "pages", len(ix.Pages))
	}
}
