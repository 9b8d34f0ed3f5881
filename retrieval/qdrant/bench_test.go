package qdrant

import (
	"context"
	"testing"

	"github.com/ragproxy/ragproxy/index"
	"github.com/ragproxy/ragproxy/retrieval/qdrant/qdranttest"
)

// Berkeley-size index: the Academic Guide has about 800 pages and 15k chunks; 1024 is a common embedding
// dimension (text-embedding-3-large at reduced size, bge-m3, e5-large).
const (
	benchPages         = 800
	benchChunksPerPage = 19
	benchDim           = 1024
)

// BenchmarkIngest compares writing a Berkeley-size index into Qdrant over real gRPC (the in-test server on
// loopback, so the figure is the client's encoding plus transport, not Qdrant's indexing) with building an
// in-process flat store of the same rows.
func BenchmarkIngest(b *testing.B) {
	ix := synthIndex(benchPages, benchChunksPerPage, benchDim, 42)
	rows := len(ix.Pages) + len(ix.Chunks)
	report := func(b *testing.B) {
		b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	}
	b.Run("wire", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, url := qdranttest.NewServer(b)
			s, err := New(Config{URL: url})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := s.Sync(context.Background(), ix); err != nil {
				b.Fatal(err)
			}
			_ = s.Close()
		}
		report(b)
	})
	b.Run("wire-resync-unchanged", func(b *testing.B) {
		_, url := qdranttest.NewServer(b)
		s, err := New(Config{URL: url})
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		if _, err := s.Sync(context.Background(), ix); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			if st, err := s.Sync(context.Background(), ix); err != nil || st.PagesWritten+st.PagesCopied != 0 {
				b.Fatalf("resync = %+v, %v", st, err)
			}
		}
	})
	b.Run("wire-next-version-one-page-changed", func(b *testing.B) {
		_, url := qdranttest.NewServer(b)
		s, err := New(Config{URL: url, KeepVersions: 1})
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		if _, err := s.Sync(context.Background(), ix); err != nil {
			b.Fatal(err)
		}
		// Two versions that differ in one page, synced in turn: each sync copies all pages but one.
		other := changePage(ix, 0, " Changed.")
		versions := []*index.Index{other, ix}
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if st, err := s.Sync(context.Background(), versions[i%2]); err != nil || st.PagesWritten != 1 {
				b.Fatalf("sync = %+v, %v", st, err)
			}
		}
		report(b)
	})
	b.Run("flat", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			f := buildFlat(ix)
			if len(f.rows) != rows*benchDim {
				b.Fatal("short flat store")
			}
		}
		report(b)
	})
}

// flatStore is the in-process baseline: every vector copied into one slab, with its page id alongside.
type flatStore struct {
	rows    []float32
	pageIDs []int32
}

func buildFlat(ix *index.Index) flatStore {
	dim := ix.Manifest.Dimension
	n := len(ix.SummaryVectors) + len(ix.ChunkVectors)
	f := flatStore{rows: make([]float32, 0, n*dim), pageIDs: make([]int32, 0, n)}
	for i, v := range ix.SummaryVectors {
		f.rows = append(f.rows, v...)
		f.pageIDs = append(f.pageIDs, int32(i))
	}
	for i, v := range ix.ChunkVectors {
		f.rows = append(f.rows, v...)
		f.pageIDs = append(f.pageIDs, int32(ix.Chunks[i].PageID))
	}
	return f
}
