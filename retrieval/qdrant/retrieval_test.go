package qdrant_test

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ragproxy/ragproxy/eval"
	"github.com/ragproxy/ragproxy/examples"
	"github.com/ragproxy/ragproxy/index"
	"github.com/ragproxy/ragproxy/internal/corpustest"
	"github.com/ragproxy/ragproxy/internal/indextest"
	"github.com/ragproxy/ragproxy/retrieval"
	"github.com/ragproxy/ragproxy/retrieval/qdrant"
	"github.com/ragproxy/ragproxy/retrieval/qdrant/qdranttest"
)

// exampleRetriever ingests the bundled example site and opens an in-process retriever over it.
func exampleRetriever(t *testing.T) *retrieval.Retriever {
	t.Helper()
	r, _ := indextest.Example(t)
	return r
}

func exampleQuestions(t *testing.T) []eval.Question {
	t.Helper()
	path := filepath.Join(t.TempDir(), "questions.jsonl")
	if err := os.WriteFile(path, examples.Questions, 0o644); err != nil {
		t.Fatal(err)
	}
	qs, err := eval.LoadQuestions(path)
	if err != nil {
		t.Fatal(err)
	}
	return qs
}

// syncedStore writes ix into a fresh in-test Qdrant and returns the store.
func syncedStore(t *testing.T, ix *index.Index) (*qdrant.Store, *qdranttest.Server) {
	t.Helper()
	srv, url := qdranttest.NewServer(t)
	s, err := qdrant.New(qdrant.Config{URL: url, Name: "example"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	if _, err := s.Sync(context.Background(), ix); err != nil {
		t.Fatal(err)
	}
	return s, srv
}

func urls(pages []retrieval.PageHit) []string {
	out := make([]string, len(pages))
	for i, p := range pages {
		out[i] = p.URL
	}
	return out
}

// TestRetrieveWithQdrant runs retrieval over the example site with the summary and chunk searches inside
// Qdrant (the in-test gRPC server) and compares it with the in-process path: the same pages in the same order
// and the same passages for every question, since Qdrant answers the same lists (the same BM25 terms over the
// same texts, the same vectors) and the ranking is the one pipeline.
func TestRetrieveWithQdrant(t *testing.T) {
	local := exampleRetriever(t)
	parity(t, local, exampleQuestions(t), examples.BaseURL)
}

// TestRetrieveWithQdrantBerkeley is the parity test on the Berkeley guide, when the corpus is configured.
func TestRetrieveWithQdrantBerkeley(t *testing.T) {
	dir := t.TempDir()
	indextest.Build(t, corpustest.Dir(t), corpustest.BaseURL, dir)
	local, _ := indextest.Open(t, dir)
	var qs []eval.Question
	for _, q := range corpustest.Questions(t) {
		qs = append(qs, eval.Question{ID: q.ID, Question: q.Question, ExpectedURLs: q.ExpectedURLs, Fact: q.Fact})
	}
	parity(t, local, qs, corpustest.BaseURL)
}

// parity checks that retrieval through the in-test Qdrant gives what it gives in process, question by question
// and over the set.
func parity(t *testing.T, local *retrieval.Retriever, qs []eval.Question, base string) {
	t.Helper()
	ctx := context.Background()
	store, srv := syncedStore(t, local.Index())
	remote := local.WithBackends(retrieval.Backends{Vectors: qdrant.NewSearcher(store, local.Index().Manifest.Version)})
	for _, q := range qs {
		t.Run(q.ID, func(t *testing.T) {
			want, err := local.Retrieve(ctx, q.Question, nil)
			if err != nil {
				t.Fatal(err)
			}
			queries, batches := srv.Count("Query"), srv.Count("QueryBatch")
			got, err := remote.Retrieve(ctx, q.Question, nil)
			if err != nil {
				t.Fatal(err)
			}
			// The page stage's summary and chunk searches, then the chunk stage's: three requests, whatever the
			// number of rewrites and lists.
			if n := srv.Count("QueryBatch") - batches; n != 3 || srv.Count("Query") != queries {
				t.Fatalf("retrieval sent %d batches and %d single queries to Qdrant, want 3 batches", n, srv.Count("Query")-queries)
			}
			// Scores are computed in float32 in one and float64 in the other, so near ties may swap places;
			// the pages kept and the first one are the same.
			w, g := urls(want.Pages), urls(got.Pages)
			if len(w) > 0 && (len(g) == 0 || w[0] != g[0]) {
				t.Errorf("%q: first page in process %v, through qdrant %v", q.Question, w, g)
			}
			slices.Sort(w)
			slices.Sort(g)
			if diff := cmp.Diff(w, g); diff != "" {
				t.Errorf("%q: pages kept (-in process +qdrant):\n%s", q.Question, diff)
			}
		})
	}

	mLocal, err := eval.Retrieve(ctx, local, retrieval.Heuristic{}, qs)
	if err != nil {
		t.Fatal(err)
	}
	mRemote, err := eval.Retrieve(ctx, remote, retrieval.Heuristic{}, qs)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("in process: fact %.3f Hit@1 %.3f Hit@8 %.3f MRR %.3f; qdrant: fact %.3f Hit@1 %.3f Hit@8 %.3f MRR %.3f",
		mLocal.FactInContext, mLocal.Hit[1], mLocal.Hit[8], mLocal.MRR,
		mRemote.FactInContext, mRemote.Hit[1], mRemote.Hit[8], mRemote.MRR)
	if mRemote.Hit[8] != mLocal.Hit[8] || mRemote.FactInContext != mLocal.FactInContext || math.Abs(mRemote.MRR-mLocal.MRR) > 0.01 {
		t.Error("the qdrant path's quality differs from the in-process path's")
	}
}

// TestRetrieveWithStaleQdrant checks that a Qdrant synced from another version of the index is reported, not
// mapped onto the wrong pages.
func TestRetrieveWithStaleQdrant(t *testing.T) {
	local := exampleRetriever(t)
	stale := *local.Index()
	stale.Pages = append([]index.Page(nil), stale.Pages...)
	for i := range stale.Pages {
		stale.Pages[i].URL += "old/"
	}
	store, _ := syncedStore(t, &stale)
	remote := local.WithBackends(retrieval.Backends{Vectors: qdrant.NewSearcher(store, local.Index().Manifest.Version)})
	_, err := remote.Retrieve(context.Background(), "when do fall classes start 2024", nil)
	if !errors.Is(err, retrieval.ErrBackendMismatch) {
		t.Errorf("Retrieve over a stale Qdrant = %v, want ErrBackendMismatch", err)
	}
}

// TestRetrieveOneVersionBehind is the rolling re-ingest: a server holds v1 in memory while ingest syncs v2,
// in which every page moved (new URLs). Bound to v1's collections, the server keeps answering from v1; bound
// to v2's (what searching the alias would give it), it would fail with ErrBackendMismatch.
func TestRetrieveOneVersionBehind(t *testing.T) {
	ctx := context.Background()
	local := exampleRetriever(t)
	v1 := local.Index()
	store, _ := syncedStore(t, v1)
	behind := local.WithBackends(retrieval.Backends{Vectors: qdrant.NewSearcher(store, v1.Manifest.Version)})

	v2 := *v1
	v2.Manifest.Version = v1.Manifest.Version + "-moved"
	v2.Pages = append([]index.Page(nil), v1.Pages...)
	for i := range v2.Pages {
		v2.Pages[i].URL += "moved/"
	}
	st, err := store.Sync(ctx, &v2)
	if err != nil {
		t.Fatal(err)
	}
	if st.Previous != v1.Manifest.Version || st.PagesWritten != len(v2.Pages) {
		t.Fatalf("sync of v2 = %+v, want every page written over v1", st)
	}
	const question = "how much is out of state tuition per semester full time"
	res, err := behind.Retrieve(ctx, question, nil)
	if err != nil {
		t.Fatalf("retrieval one version behind: %v", err)
	}
	if len(res.Pages) == 0 || res.Pages[0].URL != examples.BaseURL+"tuition/" {
		t.Errorf("retrieval one version behind found %v, want v1's tuition page first", urls(res.Pages))
	}
	ahead := local.WithBackends(retrieval.Backends{Vectors: qdrant.NewSearcher(store, v2.Manifest.Version)})
	if _, err := ahead.Retrieve(ctx, question, nil); !errors.Is(err, retrieval.ErrBackendMismatch) {
		t.Errorf("v1 retrieval over v2's collections = %v, want ErrBackendMismatch", err)
	}
}

// fakeCommunities puts every page into one community of its own id, so community selection keeps the best
// fused pages in order, as with NoCommunities.
type fakeCommunities struct{ calls int }

func (f *fakeCommunities) Communities(_ context.Context, ids []int) (map[int]int, error) {
	f.calls++
	out := map[int]int{}
	for _, id := range ids {
		out[id] = 10000 + id
	}
	return out, nil
}

// TestRetrieveWithCommunitySource checks that community ids from a CommunitySource replace the index's: with
// every page alone in its community, selection keeps the top fused pages, as NoCommunities does, also for the
// questions where the index's communities keep other pages.
func TestRetrieveWithCommunitySource(t *testing.T) {
	ctx := context.Background()
	local := exampleRetriever(t)
	src := &fakeCommunities{}
	withSource := local.WithBackends(retrieval.Backends{Communities: src})
	cfg := local.Config()
	cfg.NoCommunities = true
	plain := local.WithConfig(cfg)
	differs := 0 // questions where the index's communities change the pages, so the test can tell
	for _, q := range exampleQuestions(t) {
		want, err := plain.Retrieve(ctx, q.Question, nil)
		if err != nil {
			t.Fatal(err)
		}
		got, err := withSource.Retrieve(ctx, q.Question, nil)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(urls(want.Pages), urls(got.Pages)); diff != "" {
			t.Errorf("%q: pages (-top fused +singleton communities):\n%s", q.Question, diff)
		}
		byIndex, err := local.Retrieve(ctx, q.Question, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(urls(want.Pages), urls(byIndex.Pages)) {
			differs++
		}
	}
	if differs == 0 {
		t.Error("the index's communities never change the kept pages on these questions; the test cannot tell a source from none")
	}
	if src.calls == 0 {
		t.Error("the community source was never asked")
	}
}
