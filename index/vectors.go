package index

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"unsafe"
)

// Vector files are a little-endian header (rows, dim as uint32) followed by rows*dim float32 values.
func writeVectors(path string, rows [][]float32) error {
	dim := 0
	if len(rows) > 0 {
		dim = len(rows[0])
	}
	return writeFileWith(path, func(w *bufio.Writer) error {
		return WriteVectorRows(w, len(rows), dim, func(yield func(row []float32) error) error {
			for i, r := range rows {
				if len(r) != dim {
					return fmt.Errorf("%s: row %d has %d values, want %d", filepath.Base(path), i, len(r), dim)
				}
				if err := yield(r); err != nil {
					return err
				}
			}
			return nil
		})
	})
}

// WriteVectorRows writes a vector file of n rows of dim values that each yields in order.
func WriteVectorRows(w io.Writer, n, dim int, each func(yield func(row []float32) error) error) error {
	if _, err := w.Write(vectorHeader(n, dim)); err != nil {
		return err
	}
	buf := make([]byte, 4*dim)
	rows := 0
	err := each(func(row []float32) error {
		if len(row) != dim {
			return fmt.Errorf("row %d has %d values, want %d", rows, len(row), dim)
		}
		rows++
		_, err := w.Write(rowBytes(row, buf))
		return err
	})
	if err == nil && rows != n {
		err = fmt.Errorf("%d rows written, %d announced", rows, n)
	}
	return err
}

// MapVectorFile maps the vector file name (see WriteVectorRows) of the version directory ix was loaded from and
// returns its values, row after row, and the row length: read-only, valid while ix is reachable (see MapFile).
// On a big-endian machine the values are read into memory instead.
func (ix *Index) MapVectorFile(name string) (values []float32, dim int, err error) {
	if ix.dir == "" {
		return nil, 0, fmt.Errorf("index: map %s: the index was not loaded from disk", name)
	}
	values, _, dim, m, err := mapVectorValues(filepath.Join(ix.dir, name))
	if err != nil {
		return nil, 0, err
	}
	if m != nil {
		ix.maps = append(ix.maps, m)
	}
	return values, dim, nil
}

func readVectors(path string) ([][]float32, *mapping, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	n, dim, err := vectorShape(path, b)
	if err != nil {
		return nil, nil, err
	}
	flat := make([]float32, n*dim)
	for i := range flat {
		flat[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[8+4*i:]))
	}
	return vectorRows(flat, n, dim), nil, nil
}

// mapVectors maps a vector file and returns rows that point into the mapping, or reads it as readVectors does on
// a big-endian machine.
func mapVectors(path string) ([][]float32, *mapping, error) {
	flat, n, dim, m, err := mapVectorValues(path)
	if err != nil {
		return nil, nil, err
	}
	return vectorRows(flat, n, dim), m, nil
}

// mapVectorValues maps a vector file and returns its values in place, or reads them (no mapping) on a
// big-endian machine.
func mapVectorValues(path string) (flat []float32, n, dim int, m *mapping, err error) {
	if !littleEndian() {
		rows, _, err := readVectors(path)
		if err != nil {
			return nil, 0, 0, nil, err
		}
		if len(rows) > 0 {
			dim = len(rows[0])
			flat = rows[0][:len(rows)*dim]
		}
		return flat, len(rows), dim, nil, nil
	}
	if m, err = mapFile(path); err != nil {
		return nil, 0, 0, nil, err
	}
	if n, dim, err = vectorShape(path, m.data); err != nil {
		return nil, 0, 0, nil, err
	}
	if n*dim > 0 {
		// The header is 8 bytes and a mapping starts on a page, so the values are aligned for float32.
		flat = unsafe.Slice((*float32)(unsafe.Pointer(&m.data[8])), n*dim)
	}
	return flat, n, dim, m, nil
}

// vectorHeader is the header of a vector file of n rows of dim values.
func vectorHeader(n, dim int) []byte {
	var hdr [8]byte
	binary.LittleEndian.PutUint32(hdr[0:], uint32(n))
	binary.LittleEndian.PutUint32(hdr[4:], uint32(dim))
	return hdr[:]
}

// rowBytes returns row as a vector file stores it, little-endian: row's own bytes on a little-endian machine,
// else encoded into buf (4 bytes a value).
func rowBytes(row []float32, buf []byte) []byte {
	if len(row) == 0 {
		return nil
	}
	if littleEndian() {
		return unsafe.Slice((*byte)(unsafe.Pointer(&row[0])), 4*len(row))
	}
	for j, x := range row {
		binary.LittleEndian.PutUint32(buf[4*j:], math.Float32bits(x))
	}
	return buf[:4*len(row)]
}

func vectorShape(path string, b []byte) (n, dim int, err error) {
	if len(b) < 8 {
		return 0, 0, fmt.Errorf("%s: %w", filepath.Base(path), io.ErrUnexpectedEOF)
	}
	n = int(binary.LittleEndian.Uint32(b[0:]))
	dim = int(binary.LittleEndian.Uint32(b[4:]))
	if uint64(len(b)-8) != 4*uint64(n)*uint64(dim) {
		return 0, 0, fmt.Errorf("%s: %d bytes for %d rows of %d", filepath.Base(path), len(b)-8, n, dim)
	}
	return n, dim, nil
}

// vectorRows slices flat into n rows of dim. Each row's capacity runs to the end of the one array, so that
// vector.NewFlat sees they are consecutive and searches them in place instead of copying them.
func vectorRows(flat []float32, n, dim int) [][]float32 {
	rows := make([][]float32, n)
	for i := range rows {
		rows[i] = flat[i*dim : (i+1)*dim]
	}
	return rows
}

func littleEndian() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}
