package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
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

	"github.com/ragproxy/ragproxy/backends"
	"github.com/ragproxy/ragproxy/examples"
	"github.com/ragproxy/ragproxy/index"
	"github.com/ragproxy/ragproxy/internal/indextest"
	"github.com/ragproxy/ragproxy/retrieval/neo4j"
	"github.com/ragproxy/ragproxy/retrieval/qdrant"
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
	Pages    int                 `json:"pages"`
	Chunks   int                 `json:"chunks"`
	Backends backends.SyncReport `json:"backends"`
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
	v := ix.Manifest.Version
	sum, ch := "lakeshore_v"+v+"_summaries", "lakeshore_v"+v+"_chunks"
	want := backends.QdrantSync{Version: v, Summaries: sum, Chunks: ch, Aliases: []string{"lakeshore_summaries", "lakeshore_chunks"},
		PagesWritten: len(ix.Pages), ChunksWritten: len(ix.Chunks)}
	q.Duration = 0
	if diff := cmp.Diff(want, *q); diff != "" {
		t.Errorf("first sync (-want +got):\n%s", diff)
	}
	for name, n := range map[string]int{sum: len(ix.Pages), ch: len(ix.Chunks), "lakeshore_summaries": len(ix.Pages)} {
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
	if q := second.Backends.Qdrant; q == nil || q.PagesWritten+q.PagesCopied != 0 || q.Previous != v || srv.Count("Upsert") != upserts {
		t.Errorf("unchanged re-ingest: sync %+v, %d upserts", q, srv.Count("Upsert")-upserts)
	}
	rep := backends.SyncReport{Qdrant: second.Backends.Qdrant}
	if lines := rep.Lines(); len(lines) != 1 || !strings.Contains(lines[0], "is current already, nothing written") {
		t.Errorf("report of the unchanged re-ingest: %q", lines)
	}

	// Serve's backends search the collections of the version they were opened for.
	r, _ := indextest.Open(t, idx)
	discard := slog.New(slog.NewTextHandler(io.Discard, nil))
	bk, closeBackends, err := backends.Config{QdrantURL: url}.Open(ctx, idx, r.Index(), discard)
	if err != nil {
		t.Fatal(err)
	}
	defer closeBackends()
	if bk.Vectors == nil || bk.Communities != nil {
		t.Fatalf("backends = %+v, want vectors only", bk)
	}
	queries := srv.Count("Query") + srv.Count("QueryBatch")
	res, err := r.WithBackends(bk).Retrieve(ctx, "how much is out of state tuition per semester full time", nil)
	if err != nil {
		t.Fatal(err)
	}
	if srv.Count("Query")+srv.Count("QueryBatch") == queries {
		t.Error("retrieval sent no query to qdrant")
	}
	if len(res.Pages) == 0 || res.Pages[0].URL != examples.BaseURL+"tuition/" {
		t.Errorf("tuition question: pages %+v", res.Pages)
	}

	// Serve checks at start that Qdrant holds the index it serves.
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	if err := (backends.Config{QdrantURL: url}).Verify(bk, r.Index(), logger); err != nil || !strings.Contains(logs.String(), "qdrant holds the index") {
		t.Errorf("in-sync check = %v, logged %q", err, logs.String())
	}
	stale := *r.Index()
	stale.Pages = slices.Clone(stale.Pages)
	stale.Pages[0].Community = 4242
	logs.Reset()
	if err := (backends.Config{QdrantURL: url}).Verify(bk, &stale, logger); !errors.Is(err, backends.ErrQdrantDrift) ||
		!strings.Contains(logs.String(), "hold other pages") || !strings.Contains(logs.String(), "stale_pages=1") {
		t.Errorf("stale check = %v, logged %q", err, logs.String())
	}
	// A re-ingest after one page changed syncs a second version: the unchanged pages are copied, the aliases
	// move, and the server still bound to the first version keeps answering from it.
	edit := func(from, to string) {
		t.Helper()
		path := filepath.Join(site, "about", "index.html")
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(b, []byte(from)) {
			t.Fatalf("%s does not contain %q", path, from)
		}
		if err := os.WriteFile(path, bytes.Replace(b, []byte(from), []byte(to), 1), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	edit("nine-member Board", "eleven-member Board")
	if err := run(ctx, args); err != nil {
		t.Fatal(err)
	}
	var third ingestJSON
	if err := json.Unmarshal(stdout(), &third); err != nil {
		t.Fatal(err)
	}
	v2 := third.Backends.Qdrant
	if v2 == nil || v2.Previous != v || v2.Version == v || v2.PagesWritten == 0 || v2.PagesCopied == 0 ||
		v2.PagesWritten+v2.PagesCopied != len(ix.Pages) {
		t.Fatalf("sync after one page changed = %+v, want some pages written, the rest copied from %s", v2, v)
	}
	if got := srv.Aliases()["lakeshore_summaries"]; got != v2.Summaries {
		t.Errorf("alias names %s after the second version, want %s", got, v2.Summaries)
	}
	if _, err := r.WithBackends(bk).Retrieve(ctx, "how much is out of state tuition per semester full time", nil); err != nil {
		t.Errorf("retrieval one version behind: %v", err)
	}
	// A third version drops the first (two are kept): its server's searches fail, saying why.
	edit("eleven-member Board", "twelve-member Board")
	if err := run(ctx, args); err != nil {
		t.Fatal(err)
	}
	var fourth ingestJSON
	if err := json.Unmarshal(stdout(), &fourth); err != nil {
		t.Fatal(err)
	}
	if q := fourth.Backends.Qdrant; q == nil || !slices.Equal(q.Dropped, []string{v}) {
		t.Errorf("third version's sync = %+v, want version %s dropped", q, v)
	}
	if _, err := r.WithBackends(bk).Retrieve(ctx, "how much is out of state tuition per semester full time", nil); !errors.Is(err, qdrant.ErrVersionMissing) {
		t.Errorf("retrieval two versions behind = %v, want ErrVersionMissing", err)
	}

	// A version Qdrant has no collections for (never synced, or dropped) is named as such.
	stale.Manifest.Version = "0123456789abcdef"
	other, closeOther, err := backends.Config{QdrantURL: url}.Open(ctx, idx, &stale, discard)
	if err != nil {
		t.Fatal(err)
	}
	defer closeOther()
	logs.Reset()
	if err := (backends.Config{QdrantURL: url}).Verify(other, &stale, logger); !errors.Is(err, qdrant.ErrVersionMissing) ||
		!strings.Contains(logs.String(), "no collections for the index version") {
		t.Errorf("missing version check = %v, logged %q", err, logs.String())
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
	got, err := s.Graph(ix.Manifest.Version).Communities(ctx, ids)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("communities in neo4j (-index +neo4j):\n%s", diff)
	}
}
