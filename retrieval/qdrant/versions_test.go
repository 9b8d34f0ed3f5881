package qdrant

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/qdrant/go-client/qdrant"

	"github.com/ragproxy/ragproxy/index"
	"github.com/ragproxy/ragproxy/retrieval"
	"github.com/ragproxy/ragproxy/retrieval/qdrant/qdranttest"
)

// denseOf returns the dense vector of each point of a collection, by URL and chunk position (-1 for a
// summary point).
func denseOf(t *testing.T, f *qdranttest.Server, coll string) map[string][]float32 {
	t.Helper()
	c, ok := f.Collection(coll)
	if !ok {
		t.Fatalf("no collection %s", coll)
	}
	out := map[string][]float32{}
	for i, pl := range c.Payloads {
		key := pl[keyURL].GetStringValue()
		if ord, ok := pl[keyOrd]; ok {
			key += "#" + strconv.FormatInt(ord.GetIntegerValue(), 10)
		}
		out[key] = c.Vectors[i][DenseVector]
	}
	return out
}

// TestSyncVersions syncs three versions in turn and checks each step: the new version's collections are filled
// by copying unchanged pages and writing only the changed one, the aliases switch to it, a searcher bound to the
// previous version keeps answering from that version, and the version before that is dropped.
func TestSyncVersions(t *testing.T) {
	f, url := qdranttest.NewServer(t)
	s := newTestStore(t, url, "site")
	ctx := context.Background()
	v1 := synthIndex(8, 2, 8, 7)
	if _, err := s.Sync(ctx, v1); err != nil {
		t.Fatal(err)
	}
	v1Sum, v1Ch := s.VersionCollections(v1.Manifest.Version)
	behind := NewSearcher(s, v1.Manifest.Version) // a server that loaded v1

	// v2 changes page 3's text. The index's vectors of the unchanged page 0 are replaced too, which no real
	// re-ingest does (its content and embedder are the same): if the sync wrote page 0 from the index instead of
	// copying it, v2's collections would hold the replaced vectors.
	v2 := changePage(v1, 3, " Changed.")
	v2.SummaryVectors = slices.Clone(v1.SummaryVectors)
	v2.SummaryVectors[0] = v1.SummaryVectors[1]
	v2.ChunkVectors = slices.Clone(v1.ChunkVectors)
	v2.ChunkVectors[v2.Pages[0].Chunks[0]] = v1.ChunkVectors[v1.Pages[1].Chunks[0]]
	v2.SummaryVectors[3] = v1.SummaryVectors[2] // the changed page's new vector, which must be written
	switches := f.Count("UpdateAliases")
	st, err := s.Sync(ctx, v2)
	if err != nil {
		t.Fatal(err)
	}
	if n := f.Count("UpdateAliases") - switches; n != 1 {
		t.Errorf("the switch to v2 took %d alias requests, want 1", n)
	}
	want := SyncStats{Version: v2.Manifest.Version, Previous: v1.Manifest.Version, PagesWritten: 1, ChunksWritten: 2,
		PagesCopied: 7, ChunksCopied: 14}
	if diff := cmp.Diff(want, st); diff != "" {
		t.Errorf("second sync (-want +got):\n%s", diff)
	}
	v2Sum, v2Ch := s.VersionCollections(v2.Manifest.Version)
	if got := f.Upserted(v2Sum) + f.Upserted(v2Ch); got != 8+16 {
		t.Errorf("points upserted into v2 = %d, want 24 (every page copied or written once)", got)
	}
	got := denseOf(t, f, v2Sum)
	if diff := cmp.Diff(v1.SummaryVectors[0], got[v1.Pages[0].URL]); diff != "" {
		t.Errorf("page 0 was not copied from v1 (-v1's vector +v2's):\n%s", diff)
	}
	if diff := cmp.Diff(v1.SummaryVectors[2], got[v1.Pages[3].URL]); diff != "" {
		t.Errorf("changed page 3 was not written from the index (-index +v2's):\n%s", diff)
	}
	chunks := denseOf(t, f, v2Ch)
	if diff := cmp.Diff(v1.ChunkVectors[v1.Pages[0].Chunks[0]], chunks[v1.Pages[0].URL+"#0"]); diff != "" {
		t.Errorf("page 0's first chunk was not copied from v1 (-v1's vector +v2's):\n%s", diff)
	}
	wantAliases := map[string]string{
		"site_summaries": v2Sum, "site_chunks": v2Ch,
		"site_prev1_summaries": v1Sum, "site_prev1_chunks": v1Ch,
	}
	if diff := cmp.Diff(wantAliases, f.Aliases()); diff != "" {
		t.Errorf("aliases after v2 (-want +got):\n%s", diff)
	}
	checkState(t, f, s, v2)
	checkStateOf(t, f, v1Sum, v1Ch, v1)

	// The server one version behind still gets v1's pages: page 3's v1 text is found, with v1's labels.
	hits, err := searchSummaries(ctx, behind, retrieval.VectorQuery{Vector: v1.SummaryVectors[3]}, 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) == 0 || hits[0].PageID != 3 || hits[0].URL != v1.Pages[3].URL {
		t.Errorf("v1 search after v2's sync = %+v, want v1's page 3 first", hits)
	}
	for _, h := range hits {
		if h.PageID >= len(v1.Pages) || v1.Pages[h.PageID].URL != h.URL {
			t.Errorf("v1 search hit %+v is not a page of v1", h)
		}
	}

	// v3: the third version drops v1 (two are kept) and the v1 server's searches say why they fail.
	v3 := changePage(v2, 5, " Changed again.")
	if st, err = s.Sync(ctx, v3); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{v1.Manifest.Version}, st.Dropped); diff != "" {
		t.Errorf("dropped versions (-want +got):\n%s", diff)
	}
	v3Sum, v3Ch := s.VersionCollections(v3.Manifest.Version)
	if diff := cmp.Diff([]string{v2Ch, v2Sum, v3Ch, v3Sum}, sortedNames(f.Collections())); diff != "" {
		t.Errorf("collections after v3 (-want +got):\n%s", diff)
	}
	wantAliases = map[string]string{
		"site_summaries": v3Sum, "site_chunks": v3Ch,
		"site_prev1_summaries": v2Sum, "site_prev1_chunks": v2Ch,
	}
	if diff := cmp.Diff(wantAliases, f.Aliases()); diff != "" {
		t.Errorf("aliases after v3 (-want +got):\n%s", diff)
	}
	if _, err := searchSummaries(ctx, behind, retrieval.VectorQuery{Vector: v1.SummaryVectors[3]}, 3); !errors.Is(err, ErrVersionMissing) {
		t.Errorf("search of a dropped version = %v, want ErrVersionMissing", err)
	}
	if _, err := searchChunks(ctx, behind, retrieval.VectorQuery{Text: "topic3"}, nil, 3); !errors.Is(err, ErrVersionMissing) {
		t.Errorf("chunk search of a dropped version = %v, want ErrVersionMissing", err)
	}

	// Syncing v2 again (a rollback) reuses its kept collections: nothing is written or copied.
	upserts := f.Count("Upsert")
	if st, err = s.Sync(ctx, v2); err != nil {
		t.Fatal(err)
	}
	if st.PagesWritten+st.PagesCopied != 0 || f.Count("Upsert") != upserts || len(st.Dropped) != 0 {
		t.Errorf("rollback to the kept v2 = %+v with %d upserts, want nothing written or dropped", st, f.Count("Upsert")-upserts)
	}
	if got := f.Aliases()["site_summaries"]; got != v2Sum {
		t.Errorf("alias after rollback names %s, want %s", got, v2Sum)
	}
	if got := f.Aliases()["site_prev1_summaries"]; got != v3Sum {
		t.Errorf("history alias after rollback names %s, want %s", got, v3Sum)
	}
}

func sortedNames(names []string) []string {
	return slices.Sorted(slices.Values(names))
}

func TestSyncKeepVersions(t *testing.T) {
	base := synthIndex(4, 1, 8, 11)
	versions := []*index.Index{base}
	for i := range 3 {
		versions = append(versions, changePage(versions[len(versions)-1], i, " more"))
	}
	for _, keep := range []int{1, 2, 3} {
		t.Run("keep"+strconv.Itoa(keep), func(t *testing.T) {
			f, url := qdranttest.NewServer(t)
			s, err := New(Config{URL: url, Name: "site", KeepVersions: keep})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			for _, v := range versions {
				if _, err := s.Sync(context.Background(), v); err != nil {
					t.Fatal(err)
				}
			}
			var want []string
			for _, v := range versions[len(versions)-keep:] {
				sum, ch := s.VersionCollections(v.Manifest.Version)
				want = append(want, sum, ch)
			}
			if diff := cmp.Diff(sortedNames(want), f.Collections()); diff != "" {
				t.Errorf("collections kept (-want +got):\n%s", diff)
			}
			if n := len(f.Aliases()); n != 2*keep {
				t.Errorf("%d aliases, want %d: %v", n, 2*keep, f.Aliases())
			}
		})
	}
}

// legacySync writes ix the way releases before versioned collections did: into real collections named
// <name>_summaries and <name>_chunks.
func legacySync(t *testing.T, s *Store, ix *index.Index) {
	t.Helper()
	ctx := context.Background()
	if err := s.ensureCollections(ctx, ix.Manifest.Dimension, s.summaries, s.chunks); err != nil {
		t.Fatal(err)
	}
	settings := settingsDigest(ix)
	for i := range ix.Pages {
		p := &ix.Pages[i]
		if err := s.upsert(ctx, s.summaries, []*qdrant.PointStruct{s.summaryPoint(ix, p, fingerprint(p, settings), 1)}); err != nil {
			t.Fatal(err)
		}
		for _, cid := range p.Chunks {
			if err := s.upsert(ctx, s.chunks, []*qdrant.PointStruct{s.chunkPoint(ix, p, cid, ix.Chunks[cid].Text, 1)}); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func TestSyncMigratesUnversioned(t *testing.T) {
	f, url := qdranttest.NewServer(t)
	s := newTestStore(t, url, "site")
	ctx := context.Background()
	old := synthIndex(6, 2, 8, 13)
	legacySync(t, s, old)
	if diff := cmp.Diff([]string{"site_chunks", "site_summaries"}, f.Collections()); diff != "" {
		t.Fatalf("legacy collections (-want +got):\n%s", diff)
	}

	v1 := changePage(old, 2, " Changed.")
	st, err := s.Sync(ctx, v1)
	if err != nil {
		t.Fatal(err)
	}
	want := SyncStats{Version: v1.Manifest.Version, PagesWritten: 1, ChunksWritten: 2, PagesCopied: 5, ChunksCopied: 10, Migrated: true}
	if diff := cmp.Diff(want, st); diff != "" {
		t.Errorf("migrating sync (-want +got):\n%s", diff)
	}
	sum, ch := s.VersionCollections(v1.Manifest.Version)
	if diff := cmp.Diff([]string{ch, sum}, f.Collections()); diff != "" {
		t.Errorf("collections after migration (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"site_summaries": sum, "site_chunks": ch}, f.Aliases()); diff != "" {
		t.Errorf("aliases after migration (-want +got):\n%s", diff)
	}
	checkState(t, f, s, v1)
	if d, err := s.Verify(ctx, v1); err != nil || !d.InSync() {
		t.Errorf("Verify after migration = %+v, %v", d, err)
	}
	// The next sync is an ordinary versioned one.
	v2 := changePage(v1, 4, " Again.")
	if st, err = s.Sync(ctx, v2); err != nil || st.Migrated || st.PagesWritten != 1 || st.Previous != v1.Manifest.Version {
		t.Errorf("sync after migration = %+v, %v", st, err)
	}
}

// TestSyncResumes checks that a sync interrupted after writing part of a version's collections is completed by
// the next sync of that version, which writes only what is missing.
func TestSyncResumes(t *testing.T) {
	f, url := qdranttest.NewServer(t)
	s := newTestStore(t, url, "site")
	ctx := context.Background()
	v1 := synthIndex(6, 2, 8, 17)
	if _, err := s.Sync(ctx, v1); err != nil {
		t.Fatal(err)
	}
	v2 := changePage(changePage(v1, 1, " x"), 4, " y")
	// The interrupted sync: v2's collections exist and hold page 1 (chunks, then its summary) but not page 4.
	sum, ch := s.VersionCollections(v2.Manifest.Version)
	if err := s.ensureCollections(ctx, 8, sum, ch); err != nil {
		t.Fatal(err)
	}
	p := &v2.Pages[1]
	for _, cid := range p.Chunks {
		if err := s.upsert(ctx, ch, []*qdrant.PointStruct{s.chunkPoint(v2, p, cid, v2.Chunks[cid].Text, 1)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.upsert(ctx, sum, []*qdrant.PointStruct{s.summaryPoint(v2, p, fingerprint(p, settingsDigest(v2)), 1)}); err != nil {
		t.Fatal(err)
	}
	st, err := s.Sync(ctx, v2)
	if err != nil {
		t.Fatal(err)
	}
	if st.PagesWritten != 1 || st.PagesCopied != 4 {
		t.Errorf("resumed sync = %+v, want page 4 written and the 4 unchanged pages copied", st)
	}
	checkState(t, f, s, v2)
}
