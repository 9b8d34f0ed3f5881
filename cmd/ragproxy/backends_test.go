package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ragproxy/ragproxy/examples"
	"github.com/ragproxy/ragproxy/index"
	"github.com/ragproxy/ragproxy/internal/indextest"
	"github.com/ragproxy/ragproxy/retrieval/neo4j"
	"github.com/ragproxy/ragproxy/retrieval/qdrant/qdranttest"
)

// exampleSite copies the bundled example site into a directory and returns it with an index path whose
// directory name is "lakeshore".
func exampleSite(t *testing.T) (site, idx string) {
	t.Helper()
	site, idx = t.TempDir(), filepath.Join(t.TempDir(), "lakeshore")
	sub, err := fs.Sub(examples.Site, "site")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(site, sub); err != nil {
		t.Fatal(err)
	}
	return site, idx
}

// captureStdout sends the commands' stdout to a file for the test's duration and returns a func that reads
// what was written since the last read.
func captureStdout(t *testing.T) func() []byte {
	t.Helper()
	f, err := os.CreateTemp(t.TempDir(), "stdout")
	if err != nil {
		t.Fatal(err)
	}
	old := os.Stdout
	os.Stdout = f
	t.Cleanup(func() { os.Stdout = old; f.Close() })
	var read int64
	return func() []byte {
		b, err := os.ReadFile(f.Name())
		if err != nil {
			t.Fatal(err)
		}
		out := b[read:]
		read = int64(len(b))
		return out
	}
}

// noBackendsEnv keeps the developer's backend settings out of the test.
func noBackendsEnv(t *testing.T) {
	for _, k := range []string{"OPENAI_API_KEY", "QDRANT_URL", "QDRANT_API_KEY", "QDRANT_COLLECTION", "NEO4J_URI", "NEO4J_PASSWORD"} {
		t.Setenv(k, "")
	}
}

type ingestJSON struct {
	Pages    int        `json:"pages"`
	Chunks   int        `json:"chunks"`
	Backends syncReport `json:"backends"`
}

// TestIngestSyncsQdrant ingests the example site with --qdrant-url pointing at the in-test Qdrant, checks the
// collections hold every page and chunk, that an unchanged re-ingest writes nothing, and that serve's backends
// then run retrieval's searches in Qdrant.
func TestIngestSyncsQdrant(t *testing.T) {
	noBackendsEnv(t)
	ctx := context.Background()
	site, idx := exampleSite(t)
	srv, url := qdranttest.NewServer(t)
	stdout := captureStdout(t)

	args := []string{"ingest", site, "--base-url", examples.BaseURL, "--index", idx, "--qdrant-url", url, "--json"}
	if err := run(ctx, args); err != nil {
		t.Fatal(err)
	}
	var first ingestJSON
	if err := json.Unmarshal(stdout(), &first); err != nil {
		t.Fatal(err)
	}
	ix, err := index.Load(idx)
	if err != nil {
		t.Fatal(err)
	}
	q := first.Backends.Qdrant
	if q == nil {
		t.Fatalf("ingest report has no qdrant sync: %+v", first)
	}
	want := qdrantSync{Summaries: "lakeshore_summaries", Chunks: "lakeshore_chunks", PagesWritten: len(ix.Pages), ChunksWritten: len(ix.Chunks)}
	q.Duration = 0
	if diff := cmp.Diff(want, *q); diff != "" {
		t.Errorf("first sync (-want +got):\n%s", diff)
	}
	for name, n := range map[string]int{"lakeshore_summaries": len(ix.Pages), "lakeshore_chunks": len(ix.Chunks)} {
		c, ok := srv.Collection(name)
		if !ok || len(c.Payloads) != n {
			t.Errorf("collection %s: exists %v with %d points, want %d", name, ok, len(c.Payloads), n)
		}
	}

	// An unchanged re-ingest, with the collection named explicitly, sends no points.
	upserts := srv.Count("Upsert")
	if err := run(ctx, append(args, "--qdrant-collection", "lakeshore")); err != nil {
		t.Fatal(err)
	}
	var second ingestJSON
	if err := json.Unmarshal(stdout(), &second); err != nil {
		t.Fatal(err)
	}
	if q := second.Backends.Qdrant; q == nil || q.PagesWritten != 0 || q.PagesDeleted != 0 || srv.Count("Upsert") != upserts {
		t.Errorf("unchanged re-ingest: sync %+v, %d upserts", q, srv.Count("Upsert")-upserts)
	}

	// Serve's backends search the same collections.
	bk, closeBackends, err := backendFlags{qdrantURL: url}.open(ctx, idx, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer closeBackends()
	if bk.Vectors == nil || bk.Communities != nil {
		t.Fatalf("backends = %+v, want vectors only", bk)
	}
	r, _ := indextest.Open(t, idx)
	queries := srv.Count("Query")
	res, err := r.WithBackends(bk).Retrieve(ctx, "how much is out of state tuition per semester full time", nil)
	if err != nil {
		t.Fatal(err)
	}
	if srv.Count("Query") == queries {
		t.Error("retrieval sent no query to qdrant")
	}
	if len(res.Pages) == 0 || res.Pages[0].URL != examples.BaseURL+"tuition/" {
		t.Errorf("tuition question: pages %+v", res.Pages)
	}

	// Serve checks at start that Qdrant holds the index it serves.
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	backendFlags{qdrantURL: url}.verify(bk, r.Index(), logger)
	if !strings.Contains(logs.String(), "qdrant holds the index") {
		t.Errorf("in-sync check logged %q", logs.String())
	}
	stale := *r.Index()
	stale.Pages = slices.Clone(stale.Pages)
	stale.Pages[0].Community = 4242
	logs.Reset()
	backendFlags{qdrantURL: url}.verify(bk, &stale, logger)
	if !strings.Contains(logs.String(), "qdrant holds another version") || !strings.Contains(logs.String(), "stale_pages=1") {
		t.Errorf("stale check logged %q", logs.String())
	}
}

// TestIngestQdrantDown checks that a Qdrant that does not answer fails the command, and leaves the local index
// written and loadable.
func TestIngestQdrantDown(t *testing.T) {
	noBackendsEnv(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	site, idx := exampleSite(t)
	captureStdout(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err = run(ctx, []string{"ingest", site, "--base-url", examples.BaseURL, "--index", idx, "--qdrant-url", "http://" + addr})
	if err == nil || !strings.Contains(err.Error(), "sync qdrant") {
		t.Fatalf("ingest with qdrant down: err = %v, want a sync qdrant error", err)
	}
	if _, err := index.Load(idx); err != nil {
		t.Errorf("local index after the failed sync: %v", err)
	}
}

// TestIngestSyncsNeo4j runs against the Neo4j server NEO4J_URI names (NEO4J_USER, NEO4J_PASSWORD), and is
// skipped without one.
func TestIngestSyncsNeo4j(t *testing.T) {
	uri := os.Getenv("NEO4J_URI")
	if uri == "" {
		t.Skip("NEO4J_URI is not set: skipping the Neo4j ingest test")
	}
	user, password := envOr("NEO4J_USER", "neo4j"), os.Getenv("NEO4J_PASSWORD")
	noBackendsEnv(t)
	t.Setenv("NEO4J_PASSWORD", password)
	ctx := context.Background()
	site, idx := exampleSite(t)
	captureStdout(t)
	if err := run(ctx, []string{"ingest", site, "--base-url", examples.BaseURL, "--index", idx, "--neo4j-uri", uri, "--neo4j-user", user}); err != nil {
		t.Fatal(err)
	}
	ix, err := index.Load(idx)
	if err != nil {
		t.Fatal(err)
	}
	s, err := neo4j.New(neo4j.Config{URI: uri, User: user, Password: password})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx)
	ids := make([]int, len(ix.Pages))
	want := map[int]int{}
	for i, p := range ix.Pages {
		ids[i], want[i] = i, p.Community
	}
	got, err := s.Communities(ctx, ids)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("communities in neo4j (-index +neo4j):\n%s", diff)
	}
}
