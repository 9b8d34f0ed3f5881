package neo4j

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/ragproxy/ragproxy/index"
	"github.com/ragproxy/ragproxy/retrieval/neo4j/neo4jtest"
)

// These tests run the store against neo4jtest's in-process Bolt server, so the driver's real protocol is
// exercised without a Neo4j server; TestIntegration runs against one when NEO4J_URI is set.

func fakeStore(t *testing.T, cfg Config) (*neo4jtest.Server, *Store) {
	t.Helper()
	f, uri := neo4jtest.NewServer(t, neo4jtest.Options{User: "neo4j", Password: "secret"})
	cfg.URI, cfg.User, cfg.Password = uri, "neo4j", "secret"
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(context.Background()) })
	return f, s
}

// TestVersions runs TestIntegration's scenario against the fake, then checks that the clean-up write left
// no pages or chunks.
func TestVersions(t *testing.T) {
	f, uri := neo4jtest.NewServer(t, neo4jtest.Options{User: "neo4j", Password: "secret"})
	testVersions(t, Config{URI: uri, User: "neo4j", Password: "secret"})
	if n := len(f.Nodes("Page")) + len(f.Nodes("Chunk")); n != 0 {
		t.Errorf("%d pages and chunks after the clean-up write, want none", n)
	}
	if diff := cmp.Diff([]string{"empty"}, project(f.Nodes("IndexVersion"), "version")); diff != "" {
		t.Errorf("versions after the clean-up write (-want +got):\n%s", diff)
	}
}

// project returns one property of each node, as strings.
func project(nodes []map[string]any, key string) []string {
	var out []string
	for _, n := range nodes {
		s, _ := n[key].(string)
		out = append(out, s)
	}
	return out
}

// graphOf reads what the fake holds of a version: each page's properties but its fingerprint, each page's
// chunk texts by position, and its links by URL.
type graphOf struct {
	Pages  map[string]map[string]any
	Chunks map[string][]string
	Links  map[string][]string
}

func readGraph(f *neo4jtest.Server, version string) graphOf {
	g := graphOf{Pages: map[string]map[string]any{}, Chunks: map[string][]string{}, Links: map[string][]string{}}
	for _, p := range f.Nodes("Page") {
		if p["version"] == version {
			delete(p, "fingerprint")
			g.Pages[p["url"].(string)] = p
		}
	}
	for _, r := range f.Relationships("HAS_CHUNK") {
		if r[1]["version"] == version {
			u := r[0]["url"].(string)
			chunks := g.Chunks[u]
			for int64(len(chunks)) <= r[1]["chunk_number"].(int64) {
				chunks = append(chunks, "")
			}
			chunks[r[1]["chunk_number"].(int64)] = r[1]["content"].(string) + "#" + itoa(r[1]["chunk_id"])
			g.Chunks[u] = chunks
		}
	}
	for _, r := range f.Relationships("LINKS_TO") {
		if r[0]["version"] == version {
			u := r[0]["url"].(string)
			g.Links[u] = append(g.Links[u], r[1]["url"].(string))
			slices.Sort(g.Links[u])
		}
	}
	return g
}

func itoa(v any) string {
	n, ok := v.(int64)
	if !ok {
		return "?"
	}
	return strconv.FormatInt(n, 10)
}

func page(url, title string, id, community int64, section string) map[string]any {
	return map[string]any{"url": url, "version": "v1", "title": title, "summary": "s" + strings.ToLower(title),
		"hash": "h" + strings.ToLower(title), "page_id": id, "community_id": community, "section": section}
}

func TestWriteGraph(t *testing.T) {
	f, s := fakeStore(t, Config{BatchSize: 2})
	ctx := context.Background()
	st, err := s.Write(ctx, smallIndex())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(WriteStats{Version: "v1", PagesWritten: 3, Dropped: []string{}}, st); diff != "" {
		t.Errorf("stats (-want +got):\n%s", diff)
	}
	want := graphOf{
		Pages: map[string]map[string]any{
			"https://x.edu/a": page("https://x.edu/a", "A", 0, 5, ""),
			"https://x.edu/b": page("https://x.edu/b", "B", 1, 5, "/en/"),
			"https://x.edu/c": page("https://x.edu/c", "C", 2, int64(index.SmallComponentCommunity), ""),
		},
		Chunks: map[string][]string{"https://x.edu/a": {"a0#0", "a1#1"}, "https://x.edu/b": {"b0#2"}},
		Links:  map[string][]string{"https://x.edu/a": {"https://x.edu/b", "https://x.edu/c"}, "https://x.edu/b": {"https://x.edu/a"}},
	}
	if diff := cmp.Diff(want, readGraph(f, "v1")); diff != "" {
		t.Errorf("graph (-want +got):\n%s", diff)
	}
	// Every statement ran in a transaction of its own: the schema and the reads as ExecuteQuery does, the
	// plan's statements and the prunes through ExecuteWrite.
	plan, _ := WritePlan(smallIndex(), Previous{}, 2)
	wantRuns := len(Constraints()) + 1 + len(plan) + 2
	if got := f.Count("RUN"); got != wantRuns || f.Count("COMMIT") != wantRuns {
		t.Errorf("RUN %d, COMMIT %d; want %d each", got, f.Count("COMMIT"), wantRuns)
	}
	if n := f.Count("ROUTE"); n != 0 {
		t.Errorf("the driver sent ROUTE %d times to a bolt:// server", n)
	}
}

// TestWriteVersions writes a sequence of versions and checks what each write reports and which versions'
// pages are left.
func TestWriteVersions(t *testing.T) {
	v := func(version string, edit func(ix *index.Index)) *index.Index {
		ix := smallIndex()
		ix.Manifest.Version = version
		if edit != nil {
			edit(ix)
		}
		return ix
	}
	retitle := func(ix *index.Index) { ix.Pages[2].Title = "C2" }
	tests := []struct {
		name   string
		cfg    Config
		writes []*index.Index
		want   WriteStats // of the last write
		left   []string   // versions of the pages left, sorted
	}{
		{"unchanged pages are copied", Config{}, []*index.Index{v("v1", nil), v("v2", nil)},
			WriteStats{Version: "v2", Previous: "v1", PagesCopied: 3, Dropped: []string{}}, []string{"v1", "v2"}},
		{"a changed page is written", Config{}, []*index.Index{v("v1", nil), v("v2", retitle)},
			WriteStats{Version: "v2", Previous: "v1", PagesCopied: 2, PagesWritten: 1, Dropped: []string{}}, []string{"v1", "v2"}},
		{"the current version again writes nothing", Config{}, []*index.Index{v("v1", nil), v("v1", nil)},
			WriteStats{Version: "v1", Dropped: []string{}}, []string{"v1"}},
		{"a third version drops the first", Config{}, []*index.Index{v("v1", nil), v("v2", nil), v("v3", retitle)},
			WriteStats{Version: "v3", Previous: "v2", PagesCopied: 2, PagesWritten: 1, Dropped: []string{"v1"}}, []string{"v2", "v3"}},
		{"keep one, in batches of one", Config{KeepVersions: 1, BatchSize: 1}, []*index.Index{v("v1", nil), v("v2", nil)},
			WriteStats{Version: "v2", Previous: "v1", PagesCopied: 3, Dropped: []string{"v1"}}, []string{"v2"}},
		{"an older version written again is newest", Config{}, []*index.Index{v("v1", nil), v("v2", nil), v("v1", retitle)},
			WriteStats{Version: "v1", Previous: "v2", PagesCopied: 2, PagesWritten: 1, Dropped: []string{}}, []string{"v1", "v2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, s := fakeStore(t, tt.cfg)
			var st WriteStats
			for _, ix := range tt.writes {
				var err error
				if st, err = s.Write(context.Background(), ix); err != nil {
					t.Fatal(err)
				}
			}
			if diff := cmp.Diff(tt.want, st); diff != "" {
				t.Errorf("stats (-want +got):\n%s", diff)
			}
			left := slices.Compact(slices.Sorted(slices.Values(project(f.Nodes("Page"), "version"))))
			if diff := cmp.Diff(tt.left, left); diff != "" {
				t.Errorf("versions left (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCopiedPages checks that a copied page takes its content from the previous version and its labels and
// chunk ids from the new index, and that its links are the new ones.
func TestCopiedPages(t *testing.T) {
	f, s := fakeStore(t, Config{})
	ctx := context.Background()
	if _, err := s.Write(ctx, smallIndex()); err != nil {
		t.Fatal(err)
	}
	v2 := &index.Index{
		Manifest: index.Manifest{Version: "v2"},
		Pages: []index.Page{
			{ID: 0, URL: "https://x.edu/b", Title: "B", Summary: "sb", Hash: "hb", Section: "/de/", Links: []int{1}, Community: 7, Chunks: []int{0}},
			{ID: 1, URL: "https://x.edu/a", Title: "A", Summary: "sa", Hash: "ha", Community: 8, Chunks: []int{1, 2}},
		},
		Chunks: []index.Chunk{
			{ID: 0, PageID: 0, Ord: 0, Text: "b0", Tokens: 5},
			{ID: 1, PageID: 1, Ord: 0, Text: "a0", Tokens: 3},
			{ID: 2, PageID: 1, Ord: 1, Text: "a1", Tokens: 4},
		},
	}
	st, err := s.Write(ctx, v2)
	if err != nil {
		t.Fatal(err)
	}
	if st.PagesCopied != 2 || st.PagesWritten != 0 {
		t.Errorf("copied %d, written %d; want 2, 0", st.PagesCopied, st.PagesWritten)
	}
	b := page("https://x.edu/b", "B", 0, 7, "/de/")
	a := page("https://x.edu/a", "A", 1, 8, "")
	b["version"], a["version"] = "v2", "v2"
	want := graphOf{
		Pages:  map[string]map[string]any{"https://x.edu/a": a, "https://x.edu/b": b},
		Chunks: map[string][]string{"https://x.edu/a": {"a0#1", "a1#2"}, "https://x.edu/b": {"b0#0"}},
		Links:  map[string][]string{"https://x.edu/b": {"https://x.edu/a"}},
	}
	if diff := cmp.Diff(want, readGraph(f, "v2")); diff != "" {
		t.Errorf("v2 graph (-want +got):\n%s", diff)
	}
}

// TestWriteLegacy writes over a graph of a release before versions: its single-property constraint would
// refuse a page's second version, and its nodes have no version; Write drops the one and deletes the others.
func TestWriteLegacy(t *testing.T) {
	f, s := fakeStore(t, Config{BatchSize: 1})
	ctx := context.Background()
	if _, err := neo4j.ExecuteQuery(ctx, s.driver, "CREATE CONSTRAINT page_url IF NOT EXISTS FOR (p:Page) REQUIRE p.url IS UNIQUE", nil, neo4j.EagerResultTransformer); err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{"https://x.edu/old1", "https://x.edu/old2"} {
		f.AddNode("Page", map[string]any{"url": u, "page_id": int64(7)})
	}
	f.AddNode("Chunk", map[string]any{"chunk_id": int64(1)})
	for _, version := range []string{"v1", "v2"} {
		ix := smallIndex()
		ix.Manifest.Version = version
		if _, err := s.Write(ctx, ix); err != nil {
			t.Fatal(err)
		}
	}
	got := slices.Sorted(slices.Values(project(f.Nodes("Page"), "version")))
	if diff := cmp.Diff([]string{"v1", "v1", "v1", "v2", "v2", "v2"}, got); diff != "" {
		t.Errorf("pages' versions (-want +got):\n%s", diff)
	}
	if n := len(f.Nodes("Chunk")); n != 6 {
		t.Errorf("%d chunks, want 6 (three per version)", n)
	}
}

func TestGraphReads(t *testing.T) {
	_, s := fakeStore(t, Config{})
	ctx := context.Background()
	if _, err := s.Write(ctx, smallIndex()); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name        string
		version     string
		ids         []int
		communities map[int]int
		page        int
		neighbours  []int
	}{
		{"known pages", "v1", []int{0, 1, 2, 42}, map[int]int{0: 5, 1: 5, 2: 9999}, 0, []int{1, 2}},
		{"linked to only", "v1", []int{2}, map[int]int{2: 9999}, 2, []int{0}},
		{"both ways once", "v1", nil, map[int]int{}, 1, []int{0}},
		{"unknown page", "v1", []int{42}, map[int]int{}, 42, nil},
		{"unknown version", "v0", []int{0, 1}, map[int]int{}, 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := s.Graph(tt.version)
			if g.Version() != tt.version {
				t.Errorf("Version() = %q", g.Version())
			}
			communities, err := g.Communities(ctx, tt.ids)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.communities, communities); diff != "" {
				t.Errorf("communities (-want +got):\n%s", diff)
			}
			neighbours, err := g.Neighbours(ctx, tt.page)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.neighbours, neighbours); diff != "" {
				t.Errorf("neighbours (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCommunitiesWithoutCommunity: a page written without a community id is left out, as unknown.
func TestCommunitiesWithoutCommunity(t *testing.T) {
	f, s := fakeStore(t, Config{})
	f.AddNode("Page", map[string]any{"url": "https://x.edu/a", "version": "v1", "page_id": int64(3)})
	f.AddNode("Page", map[string]any{"url": "https://x.edu/b", "version": "v1", "page_id": int64(4), "community_id": int64(2)})
	got, err := s.Graph("v1").Communities(context.Background(), []int{3, 4})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[int]int{4: 2}, got); diff != "" {
		t.Errorf("communities (-want +got):\n%s", diff)
	}
	runs := f.Count("RUN")
	if got, err := s.Graph("v1").Communities(context.Background(), nil); err != nil || len(got) != 0 || f.Count("RUN") != runs {
		t.Errorf("Communities(nil) = %v, %v after %d statements; want none, sent none", got, err, f.Count("RUN")-runs)
	}
}

// TestErrors checks that the server's errors come back wrapped, with their Neo4j code.
func TestErrors(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name string
		seed func(f *neo4jtest.Server)
		cfg  Config
		call func(s *Store) error
		want string // the Neo4j code, or a part of the message when there is none
	}{
		{"wrong password", nil, Config{Password: "wrong"}, func(s *Store) error { return s.Ping(ctx) }, "Neo.ClientError.Security.Unauthorized"},
		{"write with a wrong password", nil, Config{Password: "wrong"}, func(s *Store) error { _, err := s.Write(ctx, smallIndex()); return err }, "Neo.ClientError.Security.Unauthorized"},
		{"no version", nil, Config{}, func(s *Store) error { _, err := s.Write(ctx, &index.Index{}); return err }, "the index has no version"},
		{"unknown database: write", nil, Config{Database: "nope"}, func(s *Store) error { _, err := s.Write(ctx, smallIndex()); return err }, "Neo.ClientError.Database.DatabaseNotFound"},
		{"unknown database: communities", nil, Config{Database: "nope"}, func(s *Store) error { _, err := s.Graph("v1").Communities(ctx, []int{1}); return err }, "Neo.ClientError.Database.DatabaseNotFound"},
		{"unknown database: neighbours", nil, Config{Database: "nope"}, func(s *Store) error { _, err := s.Graph("v1").Neighbours(ctx, 1); return err }, "Neo.ClientError.Database.DatabaseNotFound"},
		{"a version that is not a string", func(f *neo4jtest.Server) {
			f.AddNode("IndexVersion", map[string]any{"version": int64(1), "seq": int64(1)})
		},
			Config{}, func(s *Store) error { _, err := s.Write(ctx, smallIndex()); return err }, "read versions"},
		{"a fingerprint that is not a string", func(f *neo4jtest.Server) {
			f.AddNode("IndexVersion", map[string]any{"version": "v0", "seq": int64(1)})
			f.AddNode("Page", map[string]any{"url": "https://x.edu/a", "version": "v0", "fingerprint": int64(1)})
		}, Config{}, func(s *Store) error { _, err := s.Write(ctx, smallIndex()); return err }, "read fingerprints of v0"},
		{"a url that is not a string", func(f *neo4jtest.Server) {
			f.AddNode("IndexVersion", map[string]any{"version": "v0", "seq": int64(1)})
			f.AddNode("Page", map[string]any{"url": int64(1), "version": "v0", "fingerprint": "x"})
		}, Config{}, func(s *Store) error { _, err := s.Write(ctx, smallIndex()); return err }, "read fingerprints of v0"},
		{"a page id that is not an integer", func(f *neo4jtest.Server) { f.AddNode("Page", map[string]any{"version": "v1", "page_id": 1.0}) },
			Config{}, func(s *Store) error { _, err := s.Graph("v1").Communities(ctx, []int{1}); return err }, "communities: page_id"},
		{"a community id that is not an integer", func(f *neo4jtest.Server) {
			f.AddNode("Page", map[string]any{"version": "v1", "page_id": int64(1), "community_id": "5"})
		}, Config{}, func(s *Store) error { _, err := s.Graph("v1").Communities(ctx, []int{1}); return err }, "community_id of page 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, uri := neo4jtest.NewServer(t, neo4jtest.Options{User: "neo4j", Password: "secret"})
			if tt.seed != nil {
				tt.seed(f)
			}
			cfg := tt.cfg
			cfg.URI, cfg.User = uri, "neo4j"
			if cfg.Password == "" {
				cfg.Password = "secret"
			}
			s, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close(ctx)
			err = tt.call(s)
			if err == nil {
				t.Fatal("no error")
			}
			var ne *neo4j.Neo4jError
			if strings.HasPrefix(tt.want, "Neo.") {
				if !errors.As(err, &ne) || ne.Code != tt.want {
					t.Errorf("error %v; want code %s", err, tt.want)
				}
			} else if !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "neo4j: ") {
				t.Errorf("error %q; want neo4j: ... %q", err, tt.want)
			}
		})
	}
}

// TestWriteCompletesInterrupted: a Write interrupted before it marked its version is completed by the next
// Write of that version, whose links replace the ones written before.
func TestWriteCompletesInterrupted(t *testing.T) {
	f, s := fakeStore(t, Config{})
	ctx := context.Background()
	first := smallIndex()
	first.Pages[0].Links = []int{1}
	first.Pages[1].Links = []int{2} // not linked in the version written in the end
	plan, _ := WritePlan(first, Previous{}, 1000)
	if err := s.execute(ctx, plan[:len(plan)-1]); err != nil { // all but MarkVersion
		t.Fatal(err)
	}
	if n := len(f.Nodes("IndexVersion")); n != 0 {
		t.Fatalf("%d versions marked before MarkVersion", n)
	}
	st, err := s.Write(ctx, smallIndex())
	if err != nil {
		t.Fatal(err)
	}
	if st.PagesWritten != 3 {
		t.Errorf("pages written %d, want 3", st.PagesWritten)
	}
	want := map[string][]string{"https://x.edu/a": {"https://x.edu/b", "https://x.edu/c"}, "https://x.edu/b": {"https://x.edu/a"}}
	if diff := cmp.Diff(want, readGraph(f, "v1").Links); diff != "" {
		t.Errorf("links (-want +got):\n%s", diff)
	}
	if n := len(f.Nodes("Page")); n != 3 {
		t.Errorf("%d pages, want 3", n)
	}
}
