package index_test

import (
	"os"
	"testing"

	"github.com/ragproxy/ragproxy/index"
)

// BenchmarkLoad loads the index named by RAGPROXY_BENCH_INDEX (for example one built from the Berkeley mirror):
// re-ingest and serve start with this.
func BenchmarkLoad(b *testing.B) {
	dir := os.Getenv("RAGPROXY_BENCH_INDEX")
	if dir == "" {
		b.Skip("RAGPROXY_BENCH_INDEX is not set")
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := index.Load(dir); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWrite writes the index named by RAGPROXY_BENCH_INDEX again as a new version: the last step of every
// ingest.
func BenchmarkWrite(b *testing.B) {
	src := os.Getenv("RAGPROXY_BENCH_INDEX")
	if src == "" {
		b.Skip("RAGPROXY_BENCH_INDEX is not set")
	}
	ix, err := index.Load(src)
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	b.ReportAllocs()
	for b.Loop() {
		if err := index.Write(dir, ix); err != nil {
			b.Fatal(err)
		}
	}
}
