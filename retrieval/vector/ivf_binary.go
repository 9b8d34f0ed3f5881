package vector

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"slices"
)

// The binary form of an IVF, little-endian:
//
//	magic    [8]byte "ragpxIVF"
//	version  uint32  1
//	n        uint32  rows
//	dim      uint32  row length
//	lists    uint32  0 for an exact index (no centroids or ids follow)
//	probe    uint32  the default number of lists a search reads
//	centroids lists*dim float32
//	sizes     lists uint32, the length of each list
//	ids       n uint32, the row ids of list 0, then of list 1, ..., ascending within a list
//	crc       uint32  CRC-32C (Castagnoli) of everything before it
//
// The rows themselves are not stored: ReadIVF takes them from the caller.
const (
	ivfMagic      = "ragpxIVF"
	ivfVersion    = 1
	ivfHeaderSize = len(ivfMagic) + 5*4
)

// ErrCorruptIVF is returned by ReadIVF for data that is not a whole, consistent IVF of the given rows.
var ErrCorruptIVF = errors.New("vector: corrupt IVF")

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// AppendBinary appends x's binary form (centroids and lists, not the rows) to b; it implements
// encoding.BinaryAppender.
func (x *IVF) AppendBinary(b []byte) ([]byte, error) {
	start := len(b)
	lists := x.Lists()
	b = append(b, ivfMagic...)
	for _, v := range []int{ivfVersion, x.flat.n, x.flat.dim, lists, x.probe} {
		b = binary.LittleEndian.AppendUint32(b, uint32(v))
	}
	for _, c := range x.centroids {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(c))
	}
	for l := range lists {
		b = binary.LittleEndian.AppendUint32(b, x.offsets[l+1]-x.offsets[l])
	}
	if lists > 0 {
		for _, id := range x.ids {
			b = binary.LittleEndian.AppendUint32(b, id)
		}
	}
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b[start:], castagnoli)), nil
}

// MarshalBinary returns x's binary form (see AppendBinary).
func (x *IVF) MarshalBinary() ([]byte, error) { return x.AppendBinary(nil) }

// ReadIVF rebuilds an IVF from its binary form over rows, which must be the rows it was built from (the
// same count and length are checked; the contents cannot be). Like NewIVF it keeps a copy of the rows grouped
// by list (for 213,200 rows of 256, 208 MiB allocated and copied in 0.1 to 0.6 s of CPU); ReadIVFInPlace does
// not (1 ms). It returns an error wrapping ErrCorruptIVF, never panics, for data that is
// truncated, has another magic or version, or whose lists are not a partition of the rows; every length is
// checked against len(data) before anything is allocated.
func ReadIVF(data []byte, rows [][]float32) (*IVF, error) { return readIVF(data, rows, false) }

// ReadIVFInPlace is ReadIVF for an index that searches rows where they are (IVFConfig.InPlace).
func ReadIVFInPlace(data []byte, rows [][]float32) (*IVF, error) { return readIVF(data, rows, true) }

func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrCorruptIVF, fmt.Sprintf(format, args...))
}

func readIVF(data []byte, rows [][]float32, inPlace bool) (*IVF, error) {
	if len(data) < ivfHeaderSize+4 {
		return nil, corrupt("%d bytes, shorter than the header", len(data))
	}
	if string(data[:len(ivfMagic)]) != ivfMagic {
		return nil, corrupt("bad magic %q", data[:len(ivfMagic)])
	}
	u32 := func(off int) uint32 { return binary.LittleEndian.Uint32(data[off:]) }
	h := len(ivfMagic)
	version, n, dim, lists, probe := u32(h), uint64(u32(h+4)), uint64(u32(h+8)), uint64(u32(h+12)), uint64(u32(h+16))
	if version != ivfVersion {
		return nil, fmt.Errorf("%w: version %d, this build reads version %d", ErrCorruptIVF, version, ivfVersion)
	}
	// Each part is bounded by len(data) before the total is computed, so that the sum cannot overflow.
	size := uint64(len(data))
	want := uint64(ivfHeaderSize) + 4
	if lists > 0 && (lists*dim > size/4 || lists > size/4 || n > size/4) {
		return nil, corrupt("%d bytes cannot hold %d rows of %d in %d lists", size, n, dim, lists)
	} else if lists > 0 {
		want += 4*lists*dim + 4*lists + 4*n
	}
	if want != size {
		return nil, corrupt("%d bytes, want %d for %d rows of %d in %d lists", len(data), want, n, dim, lists)
	}
	if sum := crc32.Checksum(data[:len(data)-4], castagnoli); sum != u32(len(data)-4) {
		return nil, corrupt("checksum %08x, want %08x", sum, u32(len(data)-4))
	}
	if n != uint64(len(rows)) {
		return nil, fmt.Errorf("vector: the IVF has %d rows, %d were given", n, len(rows))
	}
	if n > 0 && dim != uint64(len(rows[0])) {
		return nil, fmt.Errorf("vector: the IVF's rows have %d elements, row 0 has %d: %w", dim, len(rows[0]), ErrDimension)
	}
	flat, err := NewFlat(rows)
	if err != nil {
		return nil, err
	}
	x := &IVF{flat: flat}
	if lists == 0 {
		if probe != 0 {
			return nil, corrupt("probe %d without lists", probe)
		}
		return x, nil
	}
	if lists > n || dim == 0 || probe == 0 || probe > lists {
		return nil, corrupt("%d lists over %d rows of %d, probe %d", lists, n, dim, probe)
	}
	off := ivfHeaderSize
	x.centroids = make([]float32, lists*dim)
	for i := range x.centroids {
		c := math.Float32frombits(u32(off))
		if math.IsNaN(float64(c)) || math.IsInf(float64(c), 0) {
			return nil, corrupt("centroid %d is not finite", uint64(i)/dim)
		}
		x.centroids[i] = c
		off += 4
	}
	x.offsets = make([]uint32, lists+1)
	var total uint64
	for l := range lists {
		total += uint64(u32(off))
		if total > n {
			return nil, corrupt("lists hold more than %d rows", n)
		}
		x.offsets[l+1] = uint32(total)
		off += 4
	}
	if total != n {
		return nil, corrupt("lists hold %d rows, want %d", total, n)
	}
	x.ids = make([]uint32, n)
	seen := make([]uint64, (n+63)/64)
	for l := range lists {
		for p := x.offsets[l]; p < x.offsets[l+1]; p++ {
			id := u32(off)
			off += 4
			if uint64(id) >= n || seen[id/64]&(1<<(id%64)) != 0 || (p > x.offsets[l] && id <= x.ids[p-1]) {
				return nil, corrupt("list %d: row %d out of range, repeated or out of order", l, id)
			}
			seen[id/64] |= 1 << (id % 64)
			x.ids[p] = id
		}
	}
	x.probe = int(probe)
	if !inPlace {
		x.group()
	}
	return x, nil
}

// EachGrouped calls yield with every row in list order: the copy ReadIVFGrouped takes, for a caller that stores
// it beside its rows. An IVF without lists has none.
func (x *IVF) EachGrouped(yield func(row []float32) error) error {
	if x.Lists() == 0 {
		return nil
	}
	dim := x.flat.dim
	for _, id := range x.ids {
		if err := yield(x.flat.data[int(id)*dim : (int(id)+1)*dim]); err != nil {
			return err
		}
	}
	return nil
}

// ReadIVFGrouped is ReadIVF for a caller that holds the rows grouped by list already (as EachGrouped gives
// them, one array: row ids[p] at p*dim), a file it maps, say: the IVF searches grouped instead of a copy of its
// own, which must not change while it does. grouped's length is checked, and the first row of every list
// against rows (a grouped copy of other rows is caught; the rest cannot be checked without reading it all).
func ReadIVFGrouped(data []byte, rows [][]float32, grouped []float32) (*IVF, error) {
	x, err := readIVF(data, rows, true)
	if err != nil || x.Lists() == 0 {
		return x, err
	}
	dim := x.flat.dim
	if len(grouped) != len(x.ids)*dim {
		return nil, fmt.Errorf("vector: %d grouped values for %d rows of %d: %w", len(grouped), len(x.ids), dim, ErrCorruptIVF)
	}
	for l := range x.Lists() {
		p := int(x.offsets[l])
		if p == int(x.offsets[l+1]) {
			continue
		}
		id := int(x.ids[p])
		if !slices.Equal(grouped[p*dim:(p+1)*dim], x.flat.data[id*dim:(id+1)*dim]) {
			return nil, fmt.Errorf("vector: list %d: the grouped rows are not these rows: %w", l, ErrCorruptIVF)
		}
	}
	x.grouped = grouped
	return x, nil
}
