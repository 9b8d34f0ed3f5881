package vector

import (
	"fmt"
	"testing"

	"github.com/ragproxy/ragproxy/internal/corpustest"
)

// benchDim is the local embedder's default dimension.
const benchDim = 1024

var benchSizes = []int{1_000, 10_000, 100_000}

// fixtures caches generated collections across sub-benchmarks of one run (generation is the expensive part;
// the searches are what is measured).
type fixture struct {
	rows, queries [][]float32
	flat          *Flat
}

var fixtures = map[int]*fixture{}

func getFixture(b *testing.B, n int) *fixture {
	f, ok := fixtures[n]
	if !ok {
		rows, queries := clustered(int64(n), n, 200, benchDim)
		flat, err := NewFlat(rows)
		if err != nil {
			b.Fatal(err)
		}
		f = &fixture{rows: rows, queries: queries, flat: flat}
		fixtures[n] = f
	}
	return f
}

func benchSearch(b *testing.B, idx Index, queries [][]float32, filter func(int) bool) {
	b.ReportAllocs()
	b.ResetTimer()
	start := corpustest.CPUTime()
	i := 0
	for b.Loop() {
		idx.Search(queries[i%len(queries)], 10, filter)
		i++
	}
	corpustest.ReportCPU(b, start)
}

// BenchmarkFlat is exact top-10 search over clustered unit vectors of the embedder's dimension.
func BenchmarkFlat(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			f := getFixture(b, n)
			benchSearch(b, f.flat, f.queries, nil)
		})
	}
}

// BenchmarkFlatSearchIDs searches only the chunks of a few pages, as retrieval's chunk stage does
// (8 pages of about 20 chunks).
func BenchmarkFlatSearchIDs(b *testing.B) {
	f := getFixture(b, 10_000)
	ids := make([]int, 160)
	for i := range ids {
		ids[i] = i * 61 % 10_000
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		f.flat.SearchIDs(f.queries[i%len(f.queries)], 128, ids)
		i++
	}
}
