package qdrant_test

import (
	"context"
	"net/url"
	"strconv"
	"testing"

	"github.com/qdrant/go-client/qdrant"

	"github.com/ragproxy/ragproxy/examples"
	"github.com/ragproxy/ragproxy/retrieval"
	qstore "github.com/ragproxy/ragproxy/retrieval/qdrant"
	"github.com/ragproxy/ragproxy/retrieval/qdrant/qdranttest"
)

// scopedCases are questions whose best pages on the whole example site lie outside the scope.
var scopedCases = []struct {
	question string
	prefixes []string
}{
	{"what are the admission requirements for the nursing program?", []string{"/admissions/"}},
	{"how much is tuition for international students?", []string{"/programs/computer-science/", "/programs/data-science"}},
	{"when does the fall semester start?", []string{examples.BaseURL + "news/"}},
	{"what are the admission requirements for the nursing program?", []string{"/programs/nursing/"}},
}

// checkScoped retrieves every scoped case with r and fails on a page or chunk outside the scope, or on a
// case where the unscoped retrieval was inside it already (the case could not tell).
func checkScoped(t *testing.T, r *retrieval.Retriever) {
	t.Helper()
	ctx := context.Background()
	for _, tt := range scopedCases {
		s, err := retrieval.NewScope(tt.prefixes...)
		if err != nil {
			t.Fatal(err)
		}
		whole, err := r.Retrieve(ctx, tt.question, nil)
		if err != nil {
			t.Fatal(err)
		}
		outside := 0
		for _, p := range whole.Pages {
			if !s.Match(p.URL) {
				outside++
			}
		}
		if outside == 0 {
			t.Errorf("%q: every unscoped page is in %v already", tt.question, tt.prefixes)
		}
		res, err := r.WithScope(s).Retrieve(ctx, tt.question, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Pages) == 0 || len(res.Chunks) == 0 {
			t.Errorf("%q in %v: nothing found", tt.question, tt.prefixes)
		}
		for _, p := range res.Pages {
			if !s.Match(p.URL) {
				t.Errorf("%q in %v: page %s is outside", tt.question, tt.prefixes, p.URL)
			}
		}
		for _, c := range res.Chunks {
			if !s.Match(c.URL) {
				t.Errorf("%q in %v: chunk of %s is outside", tt.question, tt.prefixes, c.URL)
			}
		}
	}
}

// TestRetrieveScopedWithQdrant runs the scoped retrievals with the summary and chunk searches inside the in-test
// Qdrant: the url_prefixes payload filter keeps every hit in the scope, and the filter goes out in the queries.
func TestRetrieveScopedWithQdrant(t *testing.T) {
	local := exampleRetriever(t)
	store, srv := syncedStore(t, local.Index())
	remote := local.WithBackends(retrieval.Backends{Vectors: qstore.NewSearcher(store, local.Index().Manifest.Version)})
	// The store's own hits are in the scope: the filter runs in Qdrant, not only in retrieval's checks.
	searcher := qstore.NewSearcher(store, local.Index().Manifest.Version)
	for _, tt := range scopedCases {
		s, _ := retrieval.NewScope(tt.prefixes...)
		q := retrieval.VectorQuery{Text: tt.question, Vector: local.Index().SummaryVectors[0], Scope: s}
		sums, err := qstore.SearchSummariesOne(context.Background(), searcher, q, 36)
		if err != nil {
			t.Fatal(err)
		}
		chunks, err := qstore.SearchChunksOne(context.Background(), searcher, q, nil, 128)
		if err != nil {
			t.Fatal(err)
		}
		if len(sums) == 0 || len(chunks) == 0 {
			t.Errorf("%v: %d summaries, %d chunks", tt.prefixes, len(sums), len(chunks))
		}
		for _, h := range append(sums, chunks...) {
			if !s.Match(h.URL) {
				t.Errorf("%v: qdrant returned %s", tt.prefixes, h.URL)
			}
		}
	}
	before := srv.Count("Query") + srv.Count("QueryBatch")
	checkScoped(t, remote)
	if srv.Count("Query")+srv.Count("QueryBatch") == before {
		t.Fatal("no query reached Qdrant")
	}
	t.Run("in process", func(t *testing.T) { checkScoped(t, local) })
}

// TestSyncSetsPrefixesInPlace syncs, then removes url_prefixes from every point (as an earlier release wrote
// them): Verify holds the collections in sync but counts the pages unlabelled, scoped searches find nothing while
// others still work, and a sync of the same version sets the payload in place, without upserting a point. A
// url_prefixes that differs from the page's makes the page stale.
func TestSyncSetsPrefixesInPlace(t *testing.T) {
	ctx := context.Background()
	local := exampleRetriever(t)
	ix := local.Index()
	srv, url := qdranttest.NewServer(t)
	store, err := qstore.New(qstore.Config{URL: url, Name: "example"})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	if _, err := store.Sync(ctx, ix); err != nil {
		t.Fatal(err)
	}
	client, err := qdrant.NewClient(&qdrant.Config{Host: "127.0.0.1", Port: port(t, url), SkipCompatibilityCheck: true})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	sum, ch := store.VersionCollections(ix.Manifest.Version)
	every := qdrant.NewPointsSelectorFilter(&qdrant.Filter{})
	for _, coll := range []string{sum, ch} {
		_, err := client.DeletePayload(ctx, &qdrant.DeletePayloadPoints{CollectionName: coll, Wait: qdrant.PtrOf(true),
			Keys: []string{"url_prefixes"}, PointsSelector: every})
		if err != nil {
			t.Fatal(err)
		}
	}
	d, err := store.Verify(ctx, ix)
	if err != nil || !d.InSync() || d.Unlabelled != len(ix.Pages) {
		t.Fatalf("Verify without url_prefixes = %+v, %v; want in sync with every page unlabelled", d, err)
	}
	searcher := qstore.NewSearcher(store, ix.Manifest.Version)
	s, _ := retrieval.NewScope("/admissions/")
	q := retrieval.VectorQuery{Text: "how do I apply?", Scope: s}
	if hits, err := qstore.SearchSummariesOne(ctx, searcher, q, 10); err != nil || len(hits) != 0 {
		t.Fatalf("scoped search without url_prefixes = %v, %v; want nothing", hits, err)
	}
	if hits, err := qstore.SearchSummariesOne(ctx, searcher, retrieval.VectorQuery{Text: q.Text}, 10); err != nil || len(hits) == 0 {
		t.Fatalf("unscoped search without url_prefixes = %v, %v; want hits", hits, err)
	}
	upserts := srv.Upserted(sum) + srv.Upserted(ch)
	st, err := store.Sync(ctx, ix)
	if err != nil {
		t.Fatal(err)
	}
	if st.PagesRelabelled != len(ix.Pages) || st.PagesWritten != 0 || st.PagesCopied != 0 {
		t.Errorf("re-sync = %+v, want %d pages relabelled and nothing written", st, len(ix.Pages))
	}
	if got := srv.Upserted(sum) + srv.Upserted(ch); got != upserts {
		t.Errorf("re-sync upserted %d points", got-upserts)
	}
	if d, err := store.Verify(ctx, ix); err != nil || !d.InSync() || d.Unlabelled != 0 {
		t.Errorf("Verify after the re-sync = %+v, %v", d, err)
	}
	checkScoped(t, local.WithBackends(retrieval.Backends{Vectors: qstore.NewSearcher(store, ix.Manifest.Version)}))
	if hits, err := qstore.SearchSummariesOne(ctx, searcher, q, 10); err != nil || len(hits) == 0 {
		t.Errorf("scoped search after the re-sync = %v, %v; want hits", hits, err)
	}
	if st, err := store.Sync(ctx, ix); err != nil || st.PagesRelabelled != 0 {
		t.Errorf("a second re-sync = %+v, %v; want nothing relabelled", st, err)
	}
	_, err = client.SetPayload(ctx, &qdrant.SetPayloadPoints{CollectionName: sum, Wait: qdrant.PtrOf(true),
		Payload: map[string]*qdrant.Value{"url_prefixes": qdrant.NewValueFromList()}, PointsSelector: every})
	if err != nil {
		t.Fatal(err)
	}
	if d, err := store.Verify(ctx, ix); err != nil || d.Stale != len(ix.Pages) {
		t.Errorf("Verify with wrong url_prefixes = %+v, %v; want every page stale", d, err)
	}
}

// port returns the port of a http://host:port URL.
func port(t *testing.T, raw string) int {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.Atoi(u.Port())
	if err != nil {
		t.Fatal(err)
	}
	return n
}
