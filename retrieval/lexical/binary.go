package lexical

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"slices"
	"unsafe"
)

// The binary form of a BM25 index, written by AppendBinary and read by ReadBM25. All numbers are little-endian.
//
//	offset  size      field
//	0       6         magic "RPBM25"
//	6       2         format version, uint16 (binaryVersion)
//	8       4         flags, uint32: bit 0 Analyzer.KeepStopwords, bit 1 Analyzer.NoStem; other bits zero
//	12      4         documents N, uint32 (< 2^31)
//	16      8         K1, float64 (> 0)
//	24      8         B, float64 (0 to 1)
//	32      8         average document length in terms, float64 (> 0)
//	40      4         terms T, uint32 (< 2^31)
//	44      4         postings P, uint32 (< 2^31)
//	48      4         term text length S in bytes, uint32
//	52      4         zero
//	56      4*T       idf of each term, float32
//	        4*(T+1)   posting offsets, uint32: term t's postings are [offs[t], offs[t+1]); offs[0] = 0, offs[T] = P,
//	                  strictly increasing (every term has a posting)
//	        4*(T+1)   term text offsets, uint32: term t is text[toffs[t]:toffs[t+1]]; toffs[0] = 0, toffs[T] = S,
//	                  strictly increasing (no term is empty)
//	        4*P       posting documents, uint32: < N, strictly increasing within a term's postings
//	        4*P       posting impacts, float32: idf(t) * saturated tf, finite and > 0
//	        S         term text: the terms concatenated, in strictly increasing byte order
//	        4         CRC-32C (Castagnoli) of all the bytes before it
//
// The arrays start at multiples of 4 from the beginning, so an index read from a suitably aligned buffer on a
// little-endian machine uses the buffer's bytes as they are.
const (
	binaryMagic   = "RPBM25"
	binaryVersion = 1
	headerSize    = 56

	flagKeepStopwords = 1 << 0
	flagNoStem        = 1 << 1
	knownFlags        = flagKeepStopwords | flagNoStem
)

var (
	// ErrInvalidIndex is the error ReadBM25 wraps when its input is not a BM25 index in the binary form:
	// truncated, corrupt, or something else altogether.
	ErrInvalidIndex = errors.New("lexical: invalid BM25 index")
	// ErrIndexVersion is the error ReadBM25 wraps when its input is a BM25 index in a format version this build
	// does not read (written by another version of the program); the index must be built again.
	ErrIndexVersion = errors.New("lexical: unsupported BM25 index format version")
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// littleEndian reports whether the machine stores numbers little-endian, as the binary form does.
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// MarshalBinary returns the index in its binary form (see AppendBinary).
func (b *BM25) MarshalBinary() ([]byte, error) { return b.AppendBinary(nil) }

// AppendBinary appends the index in its binary form to dst: a versioned little-endian layout holding the
// configuration, the term table and the posting lists, which ReadBM25 reads back into an index that searches
// exactly as b does.
func (b *BM25) AppendBinary(dst []byte) ([]byte, error) {
	size, err := b.checkSize()
	if err != nil || size > uint64(math.MaxInt-len(dst)) {
		return dst, b.tooLarge()
	}
	start := len(dst)
	dst = slices.Grow(dst, int(size))
	dst = b.appendHeader(dst)
	dst = appendWords(dst, b.idf)
	dst = appendWords(dst, b.offs)
	dst = appendWords(dst, b.termOffs)
	dst = appendWords(dst, b.docs)
	dst = appendWords(dst, b.impact)
	dst = append(dst, b.termText...)
	dst = binary.LittleEndian.AppendUint32(dst, crc32.Checksum(dst[start:], castagnoli))
	return dst, nil
}

// BinarySize returns the length of the index's binary form.
func (b *BM25) BinarySize() int {
	return int(binarySize(uint64(len(b.idf)), uint64(len(b.docs)), uint64(len(b.termText))))
}

// WriteTo writes the index's binary form (AppendBinary's) to w without building it in memory first: the form
// of a large site's chunk index is hundreds of megabytes.
func (b *BM25) WriteTo(w io.Writer) (int64, error) {
	if _, err := b.checkSize(); err != nil {
		return 0, err
	}
	return writeForm(w, b.appendHeader(make([]byte, 0, headerSize)), func(w io.Writer) {
		writeWords(w, b.idf)
		writeWords(w, b.offs)
		writeWords(w, b.termOffs)
		writeWords(w, b.docs)
		writeWords(w, b.impact)
		io.WriteString(w, b.termText)
	})
}

// writeForm writes a binary form to w: header, what body writes (to a writer that keeps the first error and
// then writes nothing), and the CRC-32C of both.
func writeForm(w io.Writer, header []byte, body func(w io.Writer)) (int64, error) {
	crc := crc32.New(castagnoli)
	cw := &countWriter{w: io.MultiWriter(w, crc)}
	cw.Write(header)
	body(cw)
	if cw.err != nil {
		return cw.n, cw.err
	}
	n, err := w.Write(binary.LittleEndian.AppendUint32(nil, crc.Sum32()))
	return cw.n + int64(n), err
}

// countWriter counts what it writes and keeps the first error, after which it writes nothing.
type countWriter struct {
	w   io.Writer
	n   int64
	err error
}

func (c *countWriter) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.w.Write(p)
	c.n += int64(n)
	c.err = err
	return n, err
}

// writeWords writes s to w as little-endian 4-byte words, a bounded buffer at a time.
func writeWords[T word](w io.Writer, s []T) {
	const step = 1 << 14
	buf := make([]byte, 0, 4*step)
	for i := 0; i < len(s); i += step {
		w.Write(appendWords(buf[:0], s[i:min(i+step, len(s))]))
	}
}

func (b *BM25) checkSize() (uint64, error) {
	if err := checkSize(b.n, len(b.idf), len(b.docs), len(b.termText)); err != nil {
		return 0, err
	}
	return binarySize(uint64(len(b.idf)), uint64(len(b.docs)), uint64(len(b.termText))), nil
}

func (b *BM25) tooLarge() error { return tooLarge(b.n, len(b.idf), len(b.docs)) }

// checkSize checks that an index of n documents, t terms, p postings and s bytes of term text fits the binary
// form.
func checkSize(n, t, p, s int) error {
	if n > math.MaxInt32 || t > math.MaxInt32 || p > math.MaxInt32 || s > math.MaxUint32 {
		return tooLarge(n, t, p)
	}
	return nil
}

func tooLarge(n, t, p int) error {
	return fmt.Errorf("lexical: BM25 index too large for the binary form (%d documents, %d terms, %d postings)",
		n, t, p)
}

func (b *BM25) appendHeader(dst []byte) []byte {
	return appendHeader(dst, b.cfg, b.n, b.avgdl, len(b.idf), len(b.docs), len(b.termText))
}

// appendHeader appends the binary form's header of an index of n documents, t terms, p postings and s bytes of
// term text.
func appendHeader(dst []byte, cfg Config, n int, avgdl float64, t, p, s int) []byte {
	dst = append(dst, binaryMagic...)
	dst = binary.LittleEndian.AppendUint16(dst, binaryVersion)
	var flags uint32
	if cfg.Analyzer.KeepStopwords {
		flags |= flagKeepStopwords
	}
	if cfg.Analyzer.NoStem {
		flags |= flagNoStem
	}
	dst = binary.LittleEndian.AppendUint32(dst, flags)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(n))
	dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(cfg.K1))
	dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(cfg.B))
	dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(avgdl))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(t))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(p))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(s))
	return binary.LittleEndian.AppendUint32(dst, 0)
}

// binarySize is the length of the binary form of an index of t terms, p postings and s bytes of term text.
func binarySize(t, p, s uint64) uint64 {
	return headerSize + 4*t + 8*(t+1) + 8*p + s + 4
}

// word is the type of the index's 4-byte array elements.
type word interface{ ~int32 | ~uint32 | ~float32 }

// appendWords appends s to dst as little-endian 4-byte words.
func appendWords[T word](dst []byte, s []T) []byte {
	if littleEndian {
		return append(dst, unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), 4*len(s))...)
	}
	for _, v := range s {
		dst = binary.LittleEndian.AppendUint32(dst, *(*uint32)(unsafe.Pointer(&v)))
	}
	return dst
}

// ReadBM25 reads an index in the binary form AppendBinary writes. It checks the whole input (its length, its
// checksum and every offset, document and term order) and returns an error wrapping ErrInvalidIndex when
// data is not such an index, or ErrIndexVersion when it is one in a format version this build does not read.
//
// Loading does no per-term or per-posting work beyond those checks. On a little-endian machine, when data starts
// at a multiple of 4 (as a buffer from os.ReadFile or a memory mapping does), the index uses data's bytes in
// place instead of copying them: data must then not be modified while the index is in use, and it stays
// referenced as long as the index is.
func ReadBM25(data []byte) (*BM25, error) {
	if len(data) < headerSize+4 {
		if len(data) >= len(binaryMagic) && string(data[:len(binaryMagic)]) != binaryMagic {
			return nil, fmt.Errorf("%w: no BM25 index header", ErrInvalidIndex)
		}
		return nil, fmt.Errorf("%w: truncated: %d bytes, shorter than the header", ErrInvalidIndex, len(data))
	}
	if string(data[:len(binaryMagic)]) != binaryMagic {
		return nil, fmt.Errorf("%w: no BM25 index header", ErrInvalidIndex)
	}
	le := binary.LittleEndian
	if v := le.Uint16(data[6:]); v != binaryVersion {
		return nil, fmt.Errorf("%w %d (this build reads version %d)", ErrIndexVersion, v, binaryVersion)
	}
	flags := le.Uint32(data[8:])
	n := le.Uint32(data[12:])
	k1 := math.Float64frombits(le.Uint64(data[16:]))
	bParam := math.Float64frombits(le.Uint64(data[24:]))
	avgdl := math.Float64frombits(le.Uint64(data[32:]))
	t, p, s := le.Uint32(data[40:]), le.Uint32(data[44:]), le.Uint32(data[48:])
	if size := binarySize(uint64(t), uint64(p), uint64(s)); uint64(len(data)) != size {
		if uint64(len(data)) < size {
			return nil, fmt.Errorf("%w: truncated: %d bytes, the header announces %d", ErrInvalidIndex, len(data), size)
		}
		return nil, fmt.Errorf("%w: %d bytes, the header announces %d", ErrInvalidIndex, len(data), size)
	}
	body := len(data) - 4
	if sum, want := crc32.Checksum(data[:body], castagnoli), le.Uint32(data[body:]); sum != want {
		return nil, fmt.Errorf("%w: checksum %#08x, want %#08x (corrupt)", ErrInvalidIndex, sum, want)
	}
	switch {
	case flags&^knownFlags != 0:
		return nil, fmt.Errorf("%w: unknown flags %#x", ErrInvalidIndex, flags&^knownFlags)
	case le.Uint32(data[52:]) != 0:
		return nil, fmt.Errorf("%w: reserved header field not zero", ErrInvalidIndex)
	case n > math.MaxInt32 || t > math.MaxInt32 || p > math.MaxInt32:
		return nil, fmt.Errorf("%w: %d documents, %d terms, %d postings: too many", ErrInvalidIndex, n, t, p)
	case !(k1 > 0) || math.IsInf(k1, 0) || !(bParam >= 0 && bParam <= 1) || !(avgdl > 0) || math.IsInf(avgdl, 0):
		return nil, fmt.Errorf("%w: parameters k1 %g, b %g, average length %g out of range", ErrInvalidIndex, k1, bParam, avgdl)
	}
	b := &BM25{
		cfg: Config{K1: k1, B: bParam, Analyzer: Analyzer{
			KeepStopwords: flags&flagKeepStopwords != 0,
			NoStem:        flags&flagNoStem != 0,
		}},
		n:     int(n),
		avgdl: avgdl,
	}
	alias := littleEndian && uintptr(unsafe.Pointer(unsafe.SliceData(data)))%4 == 0
	off := headerSize
	b.idf = words[float32](data, &off, int(t), alias)
	b.offs = words[int32](data, &off, int(t)+1, alias)
	b.termOffs = words[uint32](data, &off, int(t)+1, alias)
	b.docs = words[int32](data, &off, int(p), alias)
	b.impact = words[float32](data, &off, int(p), alias)
	if s > 0 {
		if alias {
			b.termText = unsafe.String(&data[off], int(s))
		} else {
			b.termText = string(data[off : off+int(s)])
		}
	}
	if err := b.check(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidIndex, err)
	}
	b.initPool()
	return b, nil
}

// words returns the n 4-byte little-endian words of data at *off, advancing *off past them: data's bytes
// themselves when alias is set, else a copy. The caller has checked that data holds them.
func words[T word](data []byte, off *int, n int, alias bool) []T {
	raw := data[*off : *off+4*n]
	*off += 4 * n
	if n == 0 {
		return nil
	}
	if alias {
		return unsafe.Slice((*T)(unsafe.Pointer(&raw[0])), n)
	}
	out := make([]T, n)
	if littleEndian {
		copy(unsafe.Slice((*byte)(unsafe.Pointer(&out[0])), 4*n), raw)
		return out
	}
	for i := range out {
		v := binary.LittleEndian.Uint32(raw[4*i:])
		out[i] = *(*T)(unsafe.Pointer(&v))
	}
	return out
}

// check verifies the invariants Search and the term lookup rely on, so that no input makes them index out of
// range or miss a term.
func (b *BM25) check() error {
	t, p := len(b.idf), len(b.docs)
	if b.offs[0] != 0 || int(b.offs[t]) != p {
		return fmt.Errorf("posting offsets span [%d, %d), want [0, %d)", b.offs[0], b.offs[t], p)
	}
	if b.termOffs[0] != 0 || int(b.termOffs[t]) != len(b.termText) {
		return fmt.Errorf("term offsets span [%d, %d), want [0, %d)", b.termOffs[0], b.termOffs[t], len(b.termText))
	}
	var prev string
	for i := range t {
		lo, hi := b.offs[i], b.offs[i+1]
		if hi <= lo || int(hi) > p {
			return fmt.Errorf("term %d: postings [%d, %d) empty or outside [0, %d)", i, lo, hi, p)
		}
		tlo, thi := b.termOffs[i], b.termOffs[i+1]
		if thi <= tlo || int(thi) > len(b.termText) {
			return fmt.Errorf("term %d: text [%d, %d) empty or outside [0, %d)", i, tlo, thi, len(b.termText))
		}
		term := b.termText[tlo:thi]
		if i > 0 && term <= prev {
			return fmt.Errorf("term %d %q does not sort after %q", i, term, prev)
		}
		prev = term
		ds := b.docs[lo:hi]
		if first, last := ds[0], ds[len(ds)-1]; first < 0 || int(last) >= b.n {
			return fmt.Errorf("term %q: documents %d to %d outside [0, %d)", term, uint32(first), uint32(last), b.n)
		}
		for j := 1; j < len(ds); j++ {
			if ds[j] <= ds[j-1] {
				return fmt.Errorf("term %q: document %d after %d", term, ds[j], ds[j-1])
			}
		}
	}
	// A positive finite float32 has bits 1 to 0x7f7fffff: the largest of bits-1 tells, without a branch per
	// posting.
	var worst uint32
	for _, v := range b.impact {
		worst = max(worst, math.Float32bits(v)-1)
	}
	if worst >= 0x7f7fffff {
		for i, v := range b.impact {
			if math.Float32bits(v)-1 >= 0x7f7fffff {
				return fmt.Errorf("posting %d: impact %g", i, v)
			}
		}
	}
	return nil
}
