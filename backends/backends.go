// Package backends connects an index to the scale-out stores that ingest writes and serve searches: Qdrant for
// summaries and chunks, Neo4j for the page graph. It syncs a written index into them, opens them for a served
// version and checks that they hold it. A Config is a value and safe to share; what Open returns is bound to one
// index version.
package backends

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"time"

	"github.com/ragproxy/ragproxy/embedding"
	"github.com/ragproxy/ragproxy/index"
	"github.com/ragproxy/ragproxy/retrieval"
	"github.com/ragproxy/ragproxy/retrieval/neo4j"
	"github.com/ragproxy/ragproxy/retrieval/qdrant"
	"github.com/ragproxy/ragproxy/tokenizer"
)

// Config chooses the backends. The zero value configures none: everything stays in the local index.
type Config struct {
	// QdrantURL is Qdrant's gRPC endpoint, http://host:6334; empty: vectors stay in the local index.
	QdrantURL string
	// QdrantKey is Qdrant's API key; empty: none.
	QdrantKey string
	// QdrantCollection is the collections' prefix; empty: the index directory's name.
	QdrantCollection string
	// KeepVersions is how many index versions' Qdrant collections and Neo4j graphs a sync keeps; 0: the stores'
	// own defaults.
	KeepVersions int
	// Neo4jURI is Neo4j's URI, neo4j://host:7687; empty: the page graph stays in the local index.
	Neo4jURI string
	// Neo4jUser and Neo4jPassword authenticate to Neo4j; empty: the driver's defaults.
	Neo4jUser, Neo4jPassword string
	// Neo4jDatabase is the Neo4j database; empty: the server's default.
	Neo4jDatabase string
}

// Redacted returns c with its secrets masked, for logs.
func (c Config) Redacted() Config {
	if c.QdrantKey != "" {
		c.QdrantKey = "***"
	}
	if c.Neo4jPassword != "" {
		c.Neo4jPassword = "***"
	}
	return c
}

func (b Config) qdrantConfig(indexDir string) qdrant.Config {
	name := b.QdrantCollection
	if name == "" {
		name = filepath.Base(filepath.Clean(indexDir))
	}
	return qdrant.Config{URL: b.QdrantURL, APIKey: b.QdrantKey, Name: name, KeepVersions: b.KeepVersions}
}

func (b Config) neo4jConfig() neo4j.Config {
	return neo4j.Config{URI: b.Neo4jURI, User: b.Neo4jUser, Password: b.Neo4jPassword, Database: b.Neo4jDatabase, KeepVersions: b.KeepVersions}
}

// SyncReport is what a sync wrote into the backends.
type SyncReport struct {
	Qdrant *QdrantSync `json:"qdrant,omitempty"`
	Neo4j  *Neo4jSync  `json:"neo4j,omitempty"`
}

// QdrantSync reports a Qdrant sync: the version's collections, the aliases now naming them, and how they were
// filled (see qdrant.SyncStats).
type QdrantSync struct {
	Version         string        `json:"version"`
	Previous        string        `json:"previous,omitempty"`
	Summaries       string        `json:"summaries"`
	Chunks          string        `json:"chunks"`
	Aliases         []string      `json:"aliases"`
	PagesWritten    int           `json:"pages_written"`
	ChunksWritten   int           `json:"chunks_written"`
	PagesCopied     int           `json:"pages_copied"`
	ChunksCopied    int           `json:"chunks_copied"`
	PagesRelabelled int           `json:"pages_relabelled"`
	PagesDeleted    int           `json:"pages_deleted"`
	Migrated        bool          `json:"migrated,omitempty"`
	Dropped         []string      `json:"dropped_versions,omitempty"`
	Duration        time.Duration `json:"duration_ns"`
}

// Neo4jSync reports a Neo4j write: the version's graph and how it was written (see neo4j.WriteStats).
type Neo4jSync struct {
	Version      string        `json:"version"`
	Previous     string        `json:"previous,omitempty"`
	Pages        int           `json:"pages"`
	Chunks       int           `json:"chunks"`
	Links        int           `json:"links"`
	PagesWritten int           `json:"pages_written"`
	PagesCopied  int           `json:"pages_copied"`
	Dropped      []string      `json:"dropped_versions,omitempty"`
	Duration     time.Duration `json:"duration_ns"`
}

// Lines renders the report for the terminal.
func (r *SyncReport) Lines() []string {
	var out []string
	if q := r.Qdrant; q != nil {
		d := q.Duration.Round(time.Millisecond)
		if q.Previous == q.Version && !q.Migrated {
			out = append(out, fmt.Sprintf("qdrant %s, %s: version %s is current already, nothing written in %s", q.Summaries, q.Chunks, q.Version, d))
		} else {
			from := "from nothing"
			switch {
			case q.Migrated:
				from = "from the unversioned collections, now deleted"
			case q.Previous != "":
				from = "from version " + q.Previous
			}
			out = append(out, fmt.Sprintf("qdrant %s, %s (%s): %d pages written (%d chunks), %d copied (%d chunks) %s, %d relabelled, %d deleted in %s",
				q.Summaries, q.Chunks, strings.Join(q.Aliases, ", "), q.PagesWritten, q.ChunksWritten, q.PagesCopied, q.ChunksCopied, from,
				q.PagesRelabelled, q.PagesDeleted, d))
		}
		if len(q.Dropped) > 0 {
			out = append(out, "qdrant: dropped the collections of versions "+strings.Join(q.Dropped, ", "))
		}
	}
	if n := r.Neo4j; n != nil {
		d := n.Duration.Round(time.Millisecond)
		if n.PagesWritten+n.PagesCopied == 0 && n.Pages > 0 {
			out = append(out, fmt.Sprintf("neo4j: graph of version %s is the newest written already, nothing written in %s", n.Version, d))
		} else {
			from := ""
			if n.Previous != "" {
				from = " from version " + n.Previous
			}
			out = append(out, fmt.Sprintf("neo4j: graph of version %s, %d pages, %d chunks, %d links: %d pages written, %d copied%s in %s",
				n.Version, n.Pages, n.Chunks, n.Links, n.PagesWritten, n.PagesCopied, from, d))
		}
		if len(n.Dropped) > 0 {
			out = append(out, "neo4j: deleted the graphs of versions "+strings.Join(n.Dropped, ", "))
		}
	}
	return out
}

// Configured reports whether any backend is set.
func (b Config) Configured() bool { return b.QdrantURL != "" || b.Neo4jURI != "" }

// Sync writes the index under dir into the configured backends and reports what each wrote, also when a later
// one fails. The local index is written already and stays valid whatever happens here; a failure only means the
// backends lag behind it.
func (b Config) Sync(ctx context.Context, dir string) (*SyncReport, error) {
	rep := &SyncReport{}
	if !b.Configured() {
		return rep, nil
	}
	ix, err := index.Load(dir)
	if err != nil {
		return nil, fmt.Errorf("sync backends: %w", err)
	}
	if b.QdrantURL != "" {
		start := time.Now()
		s, err := qdrant.New(b.qdrantConfig(dir))
		if err != nil {
			return nil, fmt.Errorf("sync qdrant: %w", err)
		}
		defer s.Close()
		st, err := s.Sync(ctx, ix)
		if err != nil {
			return nil, fmt.Errorf("sync qdrant (the local index is written): %w", err)
		}
		sum, ch := s.VersionCollections(st.Version)
		aSum, aCh := s.Collections()
		rep.Qdrant = &QdrantSync{Version: st.Version, Previous: st.Previous, Summaries: sum, Chunks: ch, Aliases: []string{aSum, aCh},
			PagesWritten: st.PagesWritten, ChunksWritten: st.ChunksWritten, PagesCopied: st.PagesCopied, ChunksCopied: st.ChunksCopied,
			PagesRelabelled: st.PagesRelabelled, PagesDeleted: st.PagesDeleted, Migrated: st.Migrated, Dropped: st.Dropped,
			Duration: time.Since(start)}
	}
	if b.Neo4jURI != "" {
		start := time.Now()
		s, err := neo4j.New(b.neo4jConfig())
		if err != nil {
			return rep, fmt.Errorf("sync neo4j: %w", err)
		}
		defer s.Close(context.WithoutCancel(ctx))
		st, err := s.Write(ctx, ix)
		if err != nil {
			return rep, fmt.Errorf("sync neo4j (the local index is written): %w", err)
		}
		links := 0
		for _, p := range ix.Pages {
			links += len(p.Links)
		}
		rep.Neo4j = &Neo4jSync{Version: st.Version, Previous: st.Previous, Pages: len(ix.Pages), Chunks: len(ix.Chunks), Links: links,
			PagesWritten: st.PagesWritten, PagesCopied: st.PagesCopied, Dropped: st.Dropped, Duration: time.Since(start)}
	}
	return rep, nil
}

// Open connects to the configured backends for serving ix, loaded from the index directory dir (whose name is
// the default Qdrant prefix). The backends are bound to ix's version: Qdrant searches run on that version's
// collections, not the aliases, so a server still serving ix while ingest syncs a newer version keeps getting
// ix's pages. Open once per loaded version and close the previous version's backends when its last request has
// ended. A server that does not answer yet is logged, not fatal: gRPC and the Neo4j driver reconnect, and until
// then retrieval fails per request. The returned func closes the connections.
func (b Config) Open(ctx context.Context, dir string, ix *index.Index, logger *slog.Logger) (retrieval.Backends, func(), error) {
	var (
		bk      retrieval.Backends
		closers []func()
	)
	closeAll := func() {
		for _, c := range closers {
			c()
		}
	}
	if b.QdrantURL != "" {
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
		}
		searcher := qdrant.NewSearcher(s, ix.Manifest.Version)
		if err == nil {
			sum, ch := searcher.Collections()
			logger.Info("searching in qdrant", "qdrant", cfg.Redacted().URL, "qdrant_version", v, "index_version", ix.Manifest.Version,
				"summaries", sum, "chunks", ch)
		}
		bk.Vectors = searcher
	}
	if b.Neo4jURI != "" {
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
			logger.Info("communities from neo4j", "neo4j", cfg.Redacted().URI, "index_version", ix.Manifest.Version)
		}
		bk.Communities = s.Graph(ix.Manifest.Version)
	}
	return bk, closeAll, nil
}

// Names describes the configured backends for logs and the response cache key.
func (b Config) Names() string {
	switch {
	case b.QdrantURL != "" && b.Neo4jURI != "":
		return "qdrant+neo4j"
	case b.QdrantURL != "":
		return "qdrant"
	case b.Neo4jURI != "":
		return "neo4j"
	}
	return "in-process"
}

// ErrQdrantDrift is Verify's answer when the version's collections exist but hold something else than ix.
var ErrQdrantDrift = errors.New("qdrant's collections of the index version differ from the index")

// Verify checks that the collections bk's Qdrant searcher reads (those of the version open bound it to) hold ix,
// logs the outcome, and returns nil when they do or when no Qdrant is configured. Otherwise its searches would
// fail or miss pages: the error wraps qdrant.ErrVersionMissing when the version has no collections (not synced
// yet, or dropped), ErrQdrantDrift when they hold other pages, or the error of the check itself. A caller that
// switches versions at run time can keep the old version on an error.
func (b Config) Verify(bk retrieval.Backends, ix *index.Index, logger *slog.Logger) error {
	s, ok := bk.Vectors.(*qdrant.Searcher)
	if !ok {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sum, _ := s.Collections()
	d, err := s.Verify(ctx, ix)
	switch {
	case errors.Is(err, qdrant.ErrVersionMissing):
		logger.Warn("qdrant has no collections for the index version; searches fail until `ragproxy ingest ... --qdrant-url` syncs it, or, if it was dropped as too old, until this server loads the current index",
			"qdrant", b.QdrantURL, "index_version", ix.Manifest.Version, "summaries", sum)
		return fmt.Errorf("verify qdrant: %w", err)
	case err != nil:
		logger.Warn("could not check that qdrant holds the index", "qdrant", b.QdrantURL, "err", err)
		return fmt.Errorf("verify qdrant: %w", err)
	case !d.InSync():
		logger.Warn("qdrant's collections of the index version hold other pages; searches fail until `ragproxy ingest ... --qdrant-url` syncs it",
			"qdrant", b.QdrantURL, "index_version", ix.Manifest.Version, "summaries", sum, "missing_pages", d.Missing,
			"stale_pages", d.Stale, "extra_pages", d.Extra)
		return fmt.Errorf("verify qdrant: %d missing, %d stale, %d extra pages: %w", d.Missing, d.Stale, d.Extra, ErrQdrantDrift)
	}
	logger.Info("qdrant holds the index", "index_version", ix.Manifest.Version, "summaries", sum, "pages", len(ix.Pages))
	return nil
}

// VersionOptions are how OpenVersion loads a version; the zero value of every field works.
type VersionOptions struct {
	// Remote embeds questions for an index built with a remote embedder; nil: the index's local embedder.
	Remote embedding.Embedder
	// Tokenizer counts tokens, as retrieval.Open's tok.
	Tokenizer *tokenizer.Tokenizer
	// Retrieval is the retriever's configuration.
	Retrieval retrieval.Config
	// Check, when not nil, refuses a loaded index (a section assistant's prefix that matches no page).
	Check func(*index.Index) error
	// Opened, when not nil, is called with the backends bound to the index before OpenVersion returns.
	Opened func(retrieval.Backends, *index.Index)
	// Logger logs what the backends answer; nil discards.
	Logger *slog.Logger
	// Reload is true while another version serves: the version loads on one core, leaving the others to the
	// requests in flight, and is refused when its Qdrant collections are missing or hold other pages.
	Reload bool
}

// OpenVersion loads the index version that dir's CURRENT names, with backends bound to it. The returned func
// closes the backends and the index. A reload fails on a version whose Qdrant collections are missing or hold
// other pages: ingest replaces CURRENT before it syncs the backends, so a server that noticed early keeps its
// version until the sync is done (the reloader tries again).
func (b Config) OpenVersion(ctx context.Context, dir string, o VersionOptions) (*retrieval.Retriever, func(), error) {
	logger := o.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	open := retrieval.Open
	if o.Reload {
		open = retrieval.OpenGently
	}
	r, err := open(dir, o.Remote, o.Tokenizer, o.Retrieval)
	if err != nil {
		return nil, nil, err
	}
	ix := r.Index()
	if o.Check != nil {
		if err := o.Check(ix); err != nil {
			ix.Close()
			return nil, nil, err
		}
	}
	bk, closeBackends, err := b.Open(ctx, dir, ix, logger)
	if err != nil {
		ix.Close()
		return nil, nil, err
	}
	release := func() {
		closeBackends()
		ix.Close()
	}
	if err := b.Verify(bk, ix, logger); err != nil && o.Reload &&
		(errors.Is(err, qdrant.ErrVersionMissing) || errors.Is(err, ErrQdrantDrift)) {
		release()
		return nil, nil, err
	}
	if o.Opened != nil {
		o.Opened(bk, ix)
	}
	return r.WithBackends(bk), release, nil
}

// Probe is a readiness check of one configured backend: Check fails while it cannot answer.
type Probe struct {
	Name  string
	Check func(ctx context.Context) error
}

// Probes connects to each configured backend on a connection of its own (so that a probe never waits behind
// searches) for the server's readiness checks; close releases the connections.
func (b Config) Probes(ctx context.Context, dir string) (probes []Probe, close func(), err error) {
	var closers []func()
	close = func() {
		for _, c := range closers {
			c()
		}
	}
	if b.QdrantURL != "" {
		s, err := qdrant.New(b.qdrantConfig(dir))
		if err != nil {
			return nil, nil, fmt.Errorf("--qdrant-url: %w", err)
		}
		closers = append(closers, func() { _ = s.Close() })
		probes = append(probes, Probe{Name: "qdrant", Check: func(ctx context.Context) error {
			_, err := s.Health(ctx)
			return err
		}})
	}
	if b.Neo4jURI != "" {
		s, err := neo4j.New(b.neo4jConfig())
		if err != nil {
			close()
			return nil, nil, fmt.Errorf("--neo4j-uri: %w", err)
		}
		closers = append(closers, func() { _ = s.Close(context.WithoutCancel(ctx)) })
		probes = append(probes, Probe{Name: "neo4j", Check: s.Ping})
	}
	return probes, close, nil
}
