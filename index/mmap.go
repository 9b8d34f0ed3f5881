package index

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
)

// mapping is a file mapped read-only into memory. It is unmapped when the last value holding it (an Index, or a
// copy of one) is unreachable, never explicitly: slices into it (vector rows, search structures) may be in use
// by a request until then, and an unmapped page would crash the process, not fail a call.
type mapping struct {
	data []byte
}

// mapFile maps path whole. An empty file maps to an empty slice.
func mapFile(path string) (*mapping, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	data, err := mmap(f, st.Size())
	if err != nil {
		return nil, fmt.Errorf("map %s: %w", filepath.Base(path), err)
	}
	m := &mapping{data: data}
	if len(data) > 0 {
		runtime.AddCleanup(m, func(b []byte) { munmap(b) }, data)
	}
	return m, nil
}

// MapFile returns the bytes of the file name in the version directory ix was loaded from, mapped read-only:
// they stay valid while ix (or a copy of it) is reachable, so keep them only in what ix's users hold with it,
// and never write to them. The page cache holds them, not the Go heap: the kernel reads in what is touched and
// may drop it again under memory pressure.
func (ix *Index) MapFile(name string) ([]byte, error) {
	if ix.dir == "" {
		return nil, fmt.Errorf("index: map %s: the index was not loaded from disk", name)
	}
	m, err := mapFile(filepath.Join(ix.dir, name))
	if err != nil {
		return nil, err
	}
	ix.maps = append(ix.maps, m)
	return m.data, nil
}

// ReleaseMapped tells the kernel that the pages of the index's mapped files are not needed now: loading read
// them all (checking the search structures), but a request touches only the posting lists of its terms, and
// with Qdrant answering the vector searches no row of the mapped vectors at all. The pages come back from the
// page cache (or the disk) when touched, so the process's resident memory is what its requests use.
func (ix *Index) ReleaseMapped() {
	for _, m := range ix.maps {
		dontNeed(m.data)
	}
}
