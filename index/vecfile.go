package index

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"os"
)

// VectorFile is a vector file (the layout WriteVectorRows writes) filled row by row, in any order and from
// several goroutines at once, so that ingest stores a large site's chunk vectors as they are computed instead of
// holding them: ten copies of the Berkeley guide have 220 MB of them. SealChunks then makes an index read its
// chunk vectors from the file, and Write stores the file as it is.
type VectorFile struct {
	f      *os.File
	path   string
	n, dim int
}

// NewVectorFile creates the file at path for n rows of dim values, all zero until put.
func NewVectorFile(path string, n, dim int) (*VectorFile, error) {
	if n < 0 || dim < 0 || uint64(n) > math.MaxUint32 || uint64(dim) > math.MaxUint32 {
		return nil, fmt.Errorf("index: vector file: %d rows of %d values", n, dim)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, fmt.Errorf("index: vector file: %w", err)
	}
	if _, err = f.Write(vectorHeader(n, dim)); err == nil {
		err = f.Truncate(8 + 4*int64(n)*int64(dim))
	}
	if err != nil {
		f.Close()
		os.Remove(path)
		return nil, fmt.Errorf("index: vector file: %w", err)
	}
	return &VectorFile{f: f, path: path, n: n, dim: dim}, nil
}

// Put stores row as row i.
func (v *VectorFile) Put(i int, row []float32) error {
	if i < 0 || i >= v.n || len(row) != v.dim {
		return fmt.Errorf("index: vector file: row %d of %d values, the file has %d rows of %d", i, len(row), v.n, v.dim)
	}
	if v.dim == 0 {
		return nil
	}
	var buf []byte
	if !littleEndian() {
		buf = make([]byte, 4*len(row))
	}
	if _, err := v.f.WriteAt(rowBytes(row, buf), 8+4*int64(i)*int64(v.dim)); err != nil {
		return fmt.Errorf("index: vector file: %w", err)
	}
	return nil
}

// SealChunks syncs the file and makes it ix's chunk vectors, mapped read-only (see MapFile): the rows are then
// valid while ix is reachable, and Write stores the file itself (a hard link where it can) as the version's
// chunk vectors, as long as ix.ChunkVectors are still its rows. The file must have a row per chunk of ix.
func (v *VectorFile) SealChunks(ix *Index) error {
	if v.n != len(ix.Chunks) {
		return fmt.Errorf("index: vector file: %d rows for %d chunks", v.n, len(ix.Chunks))
	}
	if err := v.f.Sync(); err != nil {
		return fmt.Errorf("index: vector file: %w", err)
	}
	rows, m, err := mapVectors(v.path)
	if err != nil {
		return fmt.Errorf("index: vector file: %w", err)
	}
	if m != nil {
		ix.maps = append(ix.maps, m)
	}
	ix.ChunkVectors, ix.chunkVecs = rows, &fileRows{path: v.path, rows: rows}
	return nil
}

// Close closes the file; the caller removes it once the index it sealed is written.
func (v *VectorFile) Close() error { return v.f.Close() }

// fileRows are vector rows read from the vector file at path.
type fileRows struct {
	path string
	rows [][]float32
}

// same reports whether rows are still the file's: the same rows, in the same order.
func (r *fileRows) same(rows [][]float32) bool {
	if r == nil || len(rows) != len(r.rows) {
		return false
	}
	for i := range rows {
		if len(rows[i]) != len(r.rows[i]) || (len(rows[i]) > 0 && &rows[i][0] != &r.rows[i][0]) {
			return false
		}
	}
	return true
}

// linkOrCopy stores the file f (opened by name) at dst: a hard link, or a synced copy of what f reads across
// file systems, or once f's name is gone.
func linkOrCopy(f *os.File, dst string) error {
	if err := os.Link(f.Name(), dst); err == nil {
		return nil
	}
	return writeFileWith(dst, func(w *bufio.Writer) error {
		_, err := io.Copy(w, io.NewSectionReader(f, 0, math.MaxInt64))
		return err
	})
}

// linkOrCopyPath is linkOrCopy of the file at src.
func linkOrCopyPath(src, dst string) error {
	f, err := os.Open(src)
	if err != nil {
		return err
	}
	defer f.Close()
	return linkOrCopy(f, dst)
}
