package index

import (
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestVectorFile fills a vector file out of order from two goroutines, seals it as an index's chunk vectors and
// writes the index: the version holds the file itself (a hard link) and loads back the same rows.
func TestVectorFile(t *testing.T) {
	ix := sample("vf")
	want := ix.ChunkVectors
	tmp := t.TempDir()
	path := filepath.Join(tmp, "chunks.f32")
	vf, err := NewVectorFile(path, len(want), 2)
	if err != nil {
		t.Fatal(err)
	}
	defer vf.Close()
	var wg sync.WaitGroup
	for half := range 2 {
		wg.Go(func() {
			for i := len(want) - 1 - half; i >= 0; i -= 2 {
				if err := vf.Put(i, slices.Clone(want[i])); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	for _, bad := range []struct {
		i   int
		row []float32
	}{{-1, []float32{1, 0}}, {3, []float32{1, 0}}, {0, []float32{1}}} {
		if err := vf.Put(bad.i, bad.row); err == nil {
			t.Errorf("Put(%d, %v) = nil, want an error", bad.i, bad.row)
		}
	}
	ix.ChunkVectors = nil
	if err := vf.SealChunks(ix); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, ix.ChunkVectors); diff != "" {
		t.Fatalf("sealed rows (-want +got):\n%s", diff)
	}
	dir := t.TempDir()
	got := writeAndLoad(t, dir, ix)
	if diff := cmp.Diff(want, got.ChunkVectors); diff != "" {
		t.Errorf("loaded rows (-want +got):\n%s", diff)
	}
	src, err1 := os.Stat(path)
	dst, err2 := os.Stat(filepath.Join(got.Dir(), chunkVecFile))
	if err1 != nil || err2 != nil || !os.SameFile(src, dst) {
		t.Errorf("the version's chunk vectors are not the sealed file (%v, %v)", err1, err2)
	}

	// Rows replaced after sealing are written, not the file.
	ix.ChunkVectors = [][]float32{{0, 1}, {1, 0}, {0.8, 0.6}}
	ix.Manifest.Version = "vf2"
	if err := Write(dir, ix); err != nil {
		t.Fatal(err)
	}
	if got, err = Load(dir); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(ix.ChunkVectors, got.ChunkVectors); diff != "" {
		t.Errorf("replaced rows (-want +got):\n%s", diff)
	}
}

func TestVectorFileRowsPerChunk(t *testing.T) {
	vf, err := NewVectorFile(filepath.Join(t.TempDir(), "v"), 2, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer vf.Close()
	if err := vf.SealChunks(sample("x")); err == nil {
		t.Error("SealChunks of 2 rows for 3 chunks = nil, want an error")
	}
	if _, err := NewVectorFile(filepath.Join(t.TempDir(), "v"), -1, 2); err == nil {
		t.Error("NewVectorFile(-1 rows) = nil error")
	}
}
