package qdrant

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/qdrant/go-client/qdrant"

	"github.com/ragproxy/ragproxy/index"
	"github.com/ragproxy/ragproxy/retrieval/qdrant/qdranttest"
)

func newTestStore(t testing.TB, url string, name string) *Store {
	t.Helper()
	s, err := New(Config{URL: url, Name: name, BatchSize: 7})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// remoteState reads back, per URL, the page id recorded on the summary point and on each chunk point.
func remoteState(t *testing.T, f *qdranttest.Server, sumColl, chunkColl string) (summaries map[string]int64, chunks map[string][]int64) {
	t.Helper()
	summaries, chunks = map[string]int64{}, map[string][]int64{}
	sc, ok := f.Collection(sumColl)
	if !ok {
		t.Errorf("no collection %s", sumColl)
	}
	for _, pl := range sc.Payloads {
		summaries[pl[keyURL].GetStringValue()] = pl[keyPageID].GetIntegerValue()
	}
	cc, ok := f.Collection(chunkColl)
	if !ok {
		t.Errorf("no collection %s", chunkColl)
	}
	for _, pl := range cc.Payloads {
		u := pl[keyURL].GetStringValue()
		chunks[u] = append(chunks[u], pl[keyPageID].GetIntegerValue())
	}
	return summaries, chunks
}

// wantState is remoteState's expectation for ix.
func wantState(ix *index.Index) (map[string]int64, map[string][]int64) {
	summaries, chunks := map[string]int64{}, map[string][]int64{}
	for _, p := range ix.Pages {
		summaries[p.URL] = int64(p.ID)
		for range p.Chunks {
			chunks[p.URL] = append(chunks[p.URL], int64(p.ID))
		}
	}
	return summaries, chunks
}

func checkState(t *testing.T, f *qdranttest.Server, s *Store, ix *index.Index) {
	t.Helper()
	checkStateOf(t, f, s.summaries, s.chunks, ix)
}

// checkStateOf is checkState on the named collections or aliases.
func checkStateOf(t *testing.T, f *qdranttest.Server, summaries, chunks string, ix *index.Index) {
	t.Helper()
	gotS, gotC := remoteState(t, f, summaries, chunks)
	wantS, wantC := wantState(ix)
	if diff := cmp.Diff(wantS, gotS); diff != "" {
		t.Errorf("summary points: url -> page_id (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantC, gotC); diff != "" {
		t.Errorf("chunk points: url -> page_ids (-want +got):\n%s", diff)
	}
}

func TestSyncCreatesCollections(t *testing.T) {
	f, url := qdranttest.NewServer(t)
	s := newTestStore(t, url, "site")
	ix := synthIndex(5, 2, 8, 1)
	if _, err := s.Sync(context.Background(), ix); err != nil {
		t.Fatal(err)
	}
	sum, ch := s.Collections()
	if sum != "site_summaries" || ch != "site_chunks" {
		t.Errorf("Collections() = %q, %q", sum, ch)
	}
	vSum, vCh := s.VersionCollections(ix.Manifest.Version)
	if want := "site_v" + ix.Manifest.Version + "_summaries"; vSum != want || vCh != "site_v"+ix.Manifest.Version+"_chunks" {
		t.Errorf("VersionCollections = %q, %q; want %q and its chunks", vSum, vCh, want)
	}
	if diff := cmp.Diff([]string{vCh, vSum}, f.Collections()); diff != "" {
		t.Errorf("collections (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{sum: vSum, ch: vCh}, f.Aliases()); diff != "" {
		t.Errorf("aliases (-want +got):\n%s", diff)
	}
	wantIndexes := map[string]qdrant.FieldType{
		"page_id": qdrant.FieldType_FieldTypeInteger, "url": qdrant.FieldType_FieldTypeKeyword,
		"community": qdrant.FieldType_FieldTypeInteger, "section": qdrant.FieldType_FieldTypeKeyword,
		"ord": qdrant.FieldType_FieldTypeInteger, "url_prefixes": qdrant.FieldType_FieldTypeKeyword,
	}
	for _, name := range []string{vSum, vCh} {
		c, ok := f.Collection(name)
		if !ok {
			t.Fatalf("collection %s not created", name)
		}
		if diff := cmp.Diff(map[string]uint64{"dense": 8}, c.Dense); diff != "" {
			t.Errorf("%s dense vectors (-want +got):\n%s", name, diff)
		}
		if diff := cmp.Diff(map[string]bool{"bm25": true}, c.Sparse); diff != "" {
			t.Errorf("%s sparse vectors with IDF (-want +got):\n%s", name, diff)
		}
		if diff := cmp.Diff(wantIndexes, c.Indexes); diff != "" {
			t.Errorf("%s payload indexes (-want +got):\n%s", name, diff)
		}
	}
	checkState(t, f, s, ix)
	if got, want := f.Count("Upsert"), 1+2; got != want { // 5 summaries in one batch of 7, 10 chunks in two
		t.Errorf("upsert requests = %d, want %d", got, want)
	}
	// A new version of another dimension gets collections of that dimension, and copies nothing; existing
	// collections of another dimension are refused.
	wide := synthIndex(5, 2, 16, 1)
	st, err := s.Sync(context.Background(), wide)
	if err != nil {
		t.Fatal(err)
	}
	if st.PagesWritten != 5 || st.PagesCopied != 0 {
		t.Errorf("sync of another dimension = %+v, want 5 pages written and none copied", st)
	}
	if err := s.ensureCollections(context.Background(), 16, vSum); !errors.Is(err, ErrDimension) {
		t.Errorf("ensureCollections with another dimension = %v, want ErrDimension", err)
	}
}

func TestSyncIncremental(t *testing.T) {
	f, url := qdranttest.NewServer(t)
	s := newTestStore(t, url, "site")
	ctx := context.Background()
	v1 := synthIndex(10, 3, 8, 2)
	st, err := s.Sync(ctx, v1)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(SyncStats{Version: v1.Manifest.Version, PagesWritten: 10, ChunksWritten: 30}, st); diff != "" {
		t.Errorf("first sync (-want +got):\n%s", diff)
	}

	// Re-syncing the same version sends nothing.
	upserts, batches, aliases := f.Count("Upsert"), f.Count("UpdateBatch"), f.Count("UpdateAliases")
	if st, err = s.Sync(ctx, v1); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(SyncStats{Version: v1.Manifest.Version, Previous: v1.Manifest.Version}, st); diff != "" {
		t.Errorf("unchanged sync (-want +got):\n%s", diff)
	}
	if f.Count("Upsert") != upserts || f.Count("UpdateBatch") != batches || f.Count("UpdateAliases") != aliases {
		t.Errorf("unchanged sync sent %d upserts, %d batch updates and %d alias updates", f.Count("Upsert")-upserts,
			f.Count("UpdateBatch")-batches, f.Count("UpdateAliases")-aliases)
	}

	// v2: page 3 disappears, page 5 loses two chunks and changes text, page 7 moves community, and a new page
	// arrives first, shifting the ids of pages 0-2 up by one (pages 4-9 keep theirs: one page was removed
	// before them and one added).
	next := synthIndex(11, 3, 8, 2)
	fresh := next.Pages[10]
	fresh.URL, fresh.Title = "https://example.edu/new", "New page"
	pages := []index.Page{fresh}
	for _, p := range v1.Pages {
		switch p.ID {
		case 3:
			continue
		case 5:
			p.Markdown += " Updated."
			p.Hash = hashOf(p.Markdown)
			p.Chunks = p.Chunks[:1]
		case 7:
			p.Community = 42
		}
		pages = append(pages, p)
	}
	merged := &index.Index{Manifest: v1.Manifest, Pages: pages, Chunks: append(slices.Clone(v1.Chunks), next.Chunks[30:]...),
		SummaryVectors: append(slices.Clone(v1.SummaryVectors), next.SummaryVectors[10]), ChunkVectors: append(slices.Clone(v1.ChunkVectors), next.ChunkVectors[30:]...)}
	merged.Pages[0].ID = 10 // the new page's vectors sit at position 10 before renumbering
	v2 := renumber(merged)
	if st, err = s.Sync(ctx, v2); err != nil {
		t.Fatal(err)
	}
	want := SyncStats{Version: v2.Manifest.Version, Previous: v1.Manifest.Version, PagesWritten: 2, ChunksWritten: 3 + 1,
		PagesCopied: 8, ChunksCopied: 24, PagesDeleted: 1, PagesRelabelled: 4} // pages 0, 1, 2 and 7
	if diff := cmp.Diff(want, st); diff != "" {
		t.Errorf("incremental sync (-want +got):\n%s", diff)
	}
	checkState(t, f, s, v2)
	sc, _ := f.Collection(s.summaries)
	for _, pl := range sc.Payloads {
		if pl[keyURL].GetStringValue() == v1.Pages[7].URL && pl[keyCommunity].GetIntegerValue() != 42 {
			t.Errorf("relabelled page kept community %d", pl[keyCommunity].GetIntegerValue())
		}
	}
	// v1's collections are as v1 left them.
	v1Sum, v1Ch := s.VersionCollections(v1.Manifest.Version)
	checkStateOf(t, f, v1Sum, v1Ch, v1)
}

func TestSearchSummaries(t *testing.T) {
	_, url := qdranttest.NewServer(t)
	s := newTestStore(t, url, "site")
	ctx := context.Background()
	ix := synthIndex(20, 2, 16, 3)
	if _, err := s.Sync(ctx, ix); err != nil {
		t.Fatal(err)
	}
	topic := func(i int) ([]uint32, []float32) { return queryVector(fmt.Sprintf("topic%d", i)) }
	tests := []struct {
		name  string
		dense []float32
		query func() ([]uint32, []float32)
		first int
		want  []int // pages that must be among the hits
	}{
		{"dense only", ix.SummaryVectors[4], func() ([]uint32, []float32) { return nil, nil }, 4, []int{4}},
		{"sparse only", nil, func() ([]uint32, []float32) { return topic(9) }, 9, []int{9}},
		{"both agree", ix.SummaryVectors[12], func() ([]uint32, []float32) { return topic(12) }, 12, []int{12}},
		{"fused", ix.SummaryVectors[1], func() ([]uint32, []float32) { return topic(17) }, -1, []int{1, 17}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			idx, val := tc.query()
			hits, err := s.SearchSummaries(ctx, tc.dense, idx, val, 5)
			if err != nil {
				t.Fatal(err)
			}
			if len(hits) == 0 || len(hits) > 5 {
				t.Fatalf("got %d hits, want 1..5", len(hits))
			}
			if tc.first >= 0 && hits[0].PageID != tc.first {
				t.Errorf("first hit = page %d, want %d (hits %+v)", hits[0].PageID, tc.first, hits)
			}
			got := map[int]bool{}
			for i, h := range hits {
				got[h.PageID] = true
				p := ix.Pages[h.PageID]
				if h.URL != p.URL || h.Community != p.Community {
					t.Errorf("hit %+v does not match page %d (%s, community %d)", h, p.ID, p.URL, p.Community)
				}
				if i > 0 && h.Score > hits[i-1].Score {
					t.Errorf("hits not in descending score order: %+v", hits)
				}
			}
			for _, id := range tc.want {
				if !got[id] {
					t.Errorf("page %d missing from hits %+v", id, hits)
				}
			}
		})
	}
	if hits, err := s.SearchSummaries(ctx, nil, nil, nil, 5); err != nil || hits != nil {
		t.Errorf("search without a query = %v, %v; want nothing", hits, err)
	}
	if _, err := s.SearchSummaries(ctx, nil, []uint32{1, 2}, []float32{1}, 5); err == nil {
		t.Error("mismatched sparse query accepted")
	}
	if _, err := s.SearchSummaries(ctx, make([]float32, 3), nil, nil, 5); err == nil {
		t.Error("query of the wrong dimension accepted")
	}
}

func TestSearchChunksFilter(t *testing.T) {
	_, url := qdranttest.NewServer(t)
	s := newTestStore(t, url, "site")
	ctx := context.Background()
	ix := synthIndex(12, 4, 16, 4)
	if _, err := s.Sync(ctx, ix); err != nil {
		t.Fatal(err)
	}
	allowed := []int{2, 5, 11}
	// The query is chunk 0 of page 3, which the filter excludes: its nearest allowed neighbours come back.
	idx, val := queryVector("common words topic3 topic5")
	hits, err := s.SearchChunks(ctx, ix.ChunkVectors[ix.Pages[3].Chunks[0]], idx, val, allowed, 8)
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 8 {
		t.Fatalf("got %d hits, want 8", len(hits))
	}
	for _, h := range hits {
		if !slices.Contains(allowed, h.PageID) {
			t.Errorf("hit from page %d outside %v", h.PageID, allowed)
		}
		p := ix.Pages[h.PageID]
		if h.URL != p.URL || h.Ord < 0 || h.Ord >= len(p.Chunks) {
			t.Errorf("hit %+v does not match page %d", h, p.ID)
		}
	}
	// Chunk 0 of page 5 is the only allowed chunk with "topic5", so BM25 ranks it first and fusion keeps it on
	// top unless the dense list disagrees strongly; it must at least be present.
	found := slices.ContainsFunc(hits, func(h ChunkHit) bool { return h.PageID == 5 && h.Ord == 0 })
	if !found {
		t.Errorf("chunk 0 of page 5 missing from %+v", hits)
	}
	// Dense only, with the exact vector of an allowed chunk: it comes first.
	target := ix.Pages[11].Chunks[2]
	hits, err = s.SearchChunks(ctx, ix.ChunkVectors[target], nil, nil, allowed, 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) == 0 || hits[0].PageID != 11 || hits[0].Ord != 2 {
		t.Errorf("dense chunk search = %+v, want page 11 chunk 2 first", hits)
	}
	if hits, err := s.SearchChunks(ctx, ix.ChunkVectors[0], nil, nil, nil, 3); err != nil || hits != nil {
		t.Errorf("chunk search without pages = %v, %v; want nothing", hits, err)
	}
}

func TestHybridQueryShape(t *testing.T) {
	tests := []struct {
		name      string
		rrfK      uint32
		dense     []float32
		sparse    []uint32
		wantUsing []string // the prefetches' vectors, fused with RRF
		wantRRFK  bool
		direct    string // the one vector searched directly, without fusion
	}{
		{"both", 0, []float32{1}, []uint32{1}, []string{"dense", "bm25"}, false, ""},
		{"both with k", 60, []float32{1}, []uint32{1}, []string{"dense", "bm25"}, true, ""},
		{"dense", 0, []float32{1}, nil, nil, false, "dense"},
		{"sparse", 60, nil, []uint32{1}, nil, false, "bm25"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := &Store{rrfK: tc.rrfK}
			q, err := s.hybridQuery("c", tc.dense, tc.sparse, make([]float32, len(tc.sparse)), nil, 4)
			if err != nil {
				t.Fatal(err)
			}
			var using []string
			for _, p := range q.GetPrefetch() {
				using = append(using, p.GetUsing())
				if p.GetLimit() != 4 {
					t.Errorf("prefetch limit = %d, want 4", p.GetLimit())
				}
			}
			if diff := cmp.Diff(tc.wantUsing, using); diff != "" {
				t.Errorf("prefetch vectors (-want +got):\n%s", diff)
			}
			if q.GetLimit() != 4 {
				t.Errorf("limit = %d, want 4", q.GetLimit())
			}
			if tc.direct != "" {
				if _, ok := q.GetQuery().GetVariant().(*qdrant.Query_Nearest); !ok || q.GetUsing() != tc.direct {
					t.Errorf("query %T using %q, want a nearest search of %q", q.GetQuery().GetVariant(), q.GetUsing(), tc.direct)
				}
				return
			}
			_, isRRF := q.GetQuery().GetVariant().(*qdrant.Query_Rrf)
			if isRRF != tc.wantRRFK {
				t.Errorf("query %T, want explicit RRF k: %v", q.GetQuery().GetVariant(), tc.wantRRFK)
			}
		})
	}
}

func TestSyncRejectsInconsistentIndex(t *testing.T) {
	s := &Store{}
	tests := map[string]func(ix *index.Index){
		"missing summary vector": func(ix *index.Index) { ix.SummaryVectors = ix.SummaryVectors[1:] },
		"short chunk vector":     func(ix *index.Index) { ix.ChunkVectors[2] = ix.ChunkVectors[2][:3] },
		"dangling chunk id":      func(ix *index.Index) { ix.Pages[0].Chunks = append(ix.Pages[0].Chunks, 99) },
	}
	for name, breakIt := range tests {
		t.Run(name, func(t *testing.T) {
			ix := synthIndex(3, 2, 8, 5)
			breakIt(ix)
			if _, err := s.Sync(context.Background(), ix); err == nil || !contains(err.Error(), "qdrant: sync") {
				t.Errorf("Sync = %v, want a validation error", err)
			}
		})
	}
}

func TestParseURL(t *testing.T) {
	tests := []struct {
		in      string
		host    string
		port    int
		tls     bool
		wantErr bool
	}{
		{"", "localhost", 6334, false, false},
		{"http://qdrant:6334", "qdrant", 6334, false, false},
		{"http://qdrant", "qdrant", 6334, false, false},
		{"https://xyz.cloud.qdrant.io:6334", "xyz.cloud.qdrant.io", 6334, true, false},
		{"http://[::1]:7000", "::1", 7000, false, false},
		{"ftp://qdrant", "", 0, false, true},
		{"http://:6334", "", 0, false, true},
	}
	for _, tc := range tests {
		host, port, tls, err := parseURL(tc.in)
		if (err != nil) != tc.wantErr || host != tc.host || port != tc.port || tls != tc.tls {
			t.Errorf("parseURL(%q) = %q, %d, %v, %v", tc.in, host, port, tls, err)
		}
	}
	if got := (Config{APIKey: "secret"}).Redacted().APIKey; got == "secret" {
		t.Error("Redacted kept the API key")
	}
}

func TestHealth(t *testing.T) {
	_, url := qdranttest.NewServer(t)
	s := newTestStore(t, url, "site")
	if v, err := s.Health(context.Background()); err != nil || v == "" {
		t.Errorf("Health = %q, %v", v, err)
	}
}

func TestVerify(t *testing.T) {
	_, url := qdranttest.NewServer(t)
	s := newTestStore(t, url, "site")
	ctx := context.Background()
	v1 := synthIndex(10, 3, 8, 2)
	if _, err := s.Sync(ctx, v1); err != nil {
		t.Fatal(err)
	}
	if d, err := s.Verify(ctx, v1); err != nil || !d.InSync() {
		t.Fatalf("Verify after Sync = %+v, %v; want in sync", d, err)
	}
	// v2 drops page 9, changes page 2's text and moves page 4 to another community; Qdrant still holds v1 only.
	v2 := synthIndex(10, 3, 8, 2)
	v2.Pages[2].Markdown += " Changed."
	v2.Pages[2].Hash = hashOf(v2.Pages[2].Markdown)
	v2.Pages[4].Community = 42
	v2.Pages[9].URL = "https://example.edu/elsewhere"
	stamp(v2)
	if _, err := s.Verify(ctx, v2); !errors.Is(err, ErrVersionMissing) {
		t.Errorf("Verify of an unsynced version = %v, want ErrVersionMissing", err)
	}
	// v1's collections compared with v2, as a server bound to v1 that loaded v2 would see them.
	d, err := NewSearcher(s, v1.Manifest.Version).Verify(ctx, v2)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Drift{Missing: 1, Stale: 2, Extra: 1}, d); diff != "" {
		t.Errorf("drift (-want +got):\n%s", diff)
	}
}
