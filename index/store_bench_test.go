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
