package index

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"unsafe"
)

// Since format 2 the texts of an index (each page's markdown, then each chunk's text) are one file, texts.bin:
//
//	"RPTX", format, pages, chunks   uint32 each, little-endian
//	offsets                         (pages+chunks+1) uint64: text i is data[offsets[i]:offsets[i+1]]
//	data
//
// so that a server can leave them on disk and read the few a request needs (see LoadOptions.TextsOnDisk): they
// are most of an index's size and, in memory, most of a server's.
const (
	textsFile   = "texts.bin"
	textsMagic  = "RPTX"
	textsFormat = 1
	textsHeader = 16
)

// Chunk records are chunks.bin since format 2: "RPCH", format, count (uint32 each), then per chunk its page id,
// ord and token count (uint32 each); a chunk's id is its position and its text is in texts.bin.
const (
	chunkRecFile   = "chunks.bin"
	chunkRecMagic  = "RPCH"
	chunkRecFormat = 1
)

// ErrTextsClosed is returned by the text readers of an index that was closed.
var ErrTextsClosed = errors.New("index closed")

// diskTexts reads texts from texts.bin on demand, a pread each, so that an open index holds only their offsets.
type diskTexts struct {
	mu     sync.RWMutex // guards f against Close
	path   string
	f      *os.File
	offs   []uint64
	pages  int
	dataAt int64
}

func writeTexts(path string, ix *Index) error {
	return writeFileWith(path, func(w *bufio.Writer) error {
		n := len(ix.Pages) + len(ix.Chunks)
		hdr := make([]byte, textsHeader, textsHeader+8*(n+1))
		copy(hdr, textsMagic)
		binary.LittleEndian.PutUint32(hdr[4:], textsFormat)
		binary.LittleEndian.PutUint32(hdr[8:], uint32(len(ix.Pages)))
		binary.LittleEndian.PutUint32(hdr[12:], uint32(len(ix.Chunks)))
		var off uint64
		hdr = binary.LittleEndian.AppendUint64(hdr, 0)
		for i := range ix.Pages {
			off += uint64(len(ix.Pages[i].Markdown))
			hdr = binary.LittleEndian.AppendUint64(hdr, off)
		}
		for i := range ix.Chunks {
			off += uint64(len(ix.Chunks[i].Text))
			hdr = binary.LittleEndian.AppendUint64(hdr, off)
		}
		w.Write(hdr)
		for i := range ix.Pages {
			w.WriteString(ix.Pages[i].Markdown)
		}
		for i := range ix.Chunks {
			w.WriteString(ix.Chunks[i].Text)
		}
		return nil
	})
}

// openTexts opens texts.bin and reads its offsets, checking them against the file's size and the index's counts.
func openTexts(path string, pages, chunks int) (*diskTexts, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	t, err := readTextsHeader(f, pages, chunks)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", filepath.Base(path), err)
	}
	return t, nil
}

func readTextsHeader(f *os.File, pages, chunks int) (*diskTexts, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	var hdr [textsHeader]byte
	if _, err := io.ReadFull(f, hdr[:]); err != nil {
		return nil, err
	}
	if string(hdr[:4]) != textsMagic {
		return nil, errors.New("not a texts file")
	}
	if v := binary.LittleEndian.Uint32(hdr[4:]); v != textsFormat {
		return nil, fmt.Errorf("texts format %d, this binary reads %d", v, textsFormat)
	}
	np, nc := int(binary.LittleEndian.Uint32(hdr[8:])), int(binary.LittleEndian.Uint32(hdr[12:]))
	if np != pages || nc != chunks {
		return nil, fmt.Errorf("holds %d pages, %d chunks; the manifest counts %d, %d", np, nc, pages, chunks)
	}
	n := np + nc + 1
	dataAt := int64(textsHeader + 8*n)
	if dataAt > st.Size() {
		return nil, io.ErrUnexpectedEOF
	}
	raw := make([]byte, 8*n)
	if _, err := io.ReadFull(bufio.NewReaderSize(f, 1<<20), raw); err != nil {
		return nil, err
	}
	offs := make([]uint64, n)
	for i := range offs {
		offs[i] = binary.LittleEndian.Uint64(raw[8*i:])
		if i > 0 && offs[i] < offs[i-1] {
			return nil, fmt.Errorf("offset %d goes backwards", i)
		}
	}
	if offs[0] != 0 || int64(offs[n-1]) != st.Size()-dataAt {
		return nil, fmt.Errorf("texts end at %d of %d bytes", offs[n-1], st.Size()-dataAt)
	}
	return &diskTexts{path: f.Name(), f: f, offs: offs, pages: np, dataAt: dataAt}, nil
}

// text reads text i (pages first, then chunks).
func (t *diskTexts) text(i int) (string, error) {
	text, err := t.readAt(t.dataAt+int64(t.offs[i]), int64(t.offs[i+1]-t.offs[i]))
	if err != nil {
		return "", fmt.Errorf("read text %d: %w", i, err)
	}
	return text, nil
}

// withFile calls use with the open texts file, which close cannot close meanwhile; ErrTextsClosed once closed.
func (t *diskTexts) withFile(use func(f *os.File) error) error {
	t.mu.RLock()
	defer t.mu.RUnlock()
	if t.f == nil {
		return ErrTextsClosed
	}
	return use(t.f)
}

// readAt reads the n bytes of the file at off.
func (t *diskTexts) readAt(off, n int64) (s string, err error) {
	err = t.withFile(func(f *os.File) error {
		s, err = readString(f, off, n)
		return err
	})
	return s, err
}

// copyText copies the n bytes of the file at off to w.
func (t *diskTexts) copyText(w io.Writer, off, n int64) error {
	return t.withFile(func(f *os.File) error {
		_, err := io.Copy(w, io.NewSectionReader(f, off, n))
		return err
	})
}

// readString reads the n bytes of f at off as a string of their own.
func readString(f *os.File, off, n int64) (string, error) {
	if n == 0 {
		return "", nil
	}
	b := make([]byte, n)
	if _, err := f.ReadAt(b, off); err != nil {
		return "", err
	}
	return unsafe.String(&b[0], len(b)), nil // b is never written again
}

// each calls yield with every text in order, reading the file once from start to end.
func (t *diskTexts) each(yield func(i int, s string) error) error {
	return t.withFile(func(f *os.File) error {
		r := bufio.NewReaderSize(io.NewSectionReader(f, t.dataAt, int64(t.offs[len(t.offs)-1])), 1<<20)
		for i := range len(t.offs) - 1 {
			b := make([]byte, t.offs[i+1]-t.offs[i])
			if _, err := io.ReadFull(r, b); err != nil {
				return fmt.Errorf("read text %d: %w", i, err)
			}
			if err := yield(i, unsafe.String(unsafe.SliceData(b), len(b))); err != nil {
				return err
			}
		}
		return nil
	})
}

func (t *diskTexts) close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.f == nil {
		return nil
	}
	err := t.f.Close()
	t.f = nil
	return err
}

// readTextsInto fills the pages' Markdown and the chunks' Text from texts.bin. Each text is its own string, so
// that a part of one kept by whatever is built from them (a word, a title) keeps only that text alive.
func readTextsInto(path string, ix *Index) error {
	t, err := openTexts(path, len(ix.Pages), len(ix.Chunks))
	if err != nil {
		return err
	}
	defer t.close()
	err = t.each(func(i int, s string) error {
		if i < t.pages {
			ix.Pages[i].Markdown = s
		} else {
			ix.Chunks[i-t.pages].Text = s
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("%s: %w", filepath.Base(path), err)
	}
	return nil
}

func writeChunkRecords(path string, chunks []Chunk) error {
	return writeFileWith(path, func(w *bufio.Writer) error {
		var b [12]byte
		copy(b[:], chunkRecMagic)
		binary.LittleEndian.PutUint32(b[4:], chunkRecFormat)
		binary.LittleEndian.PutUint32(b[8:], uint32(len(chunks)))
		w.Write(b[:])
		for _, c := range chunks {
			binary.LittleEndian.PutUint32(b[0:], uint32(c.PageID))
			binary.LittleEndian.PutUint32(b[4:], uint32(c.Ord))
			binary.LittleEndian.PutUint32(b[8:], uint32(c.Tokens))
			w.Write(b[:])
		}
		return nil
	})
}

func readChunkRecords(path string) ([]Chunk, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if len(b) < 12 || string(b[:4]) != chunkRecMagic {
		return nil, fmt.Errorf("%s: not a chunk file", filepath.Base(path))
	}
	if v := binary.LittleEndian.Uint32(b[4:]); v != chunkRecFormat {
		return nil, fmt.Errorf("%s: chunk format %d, this binary reads %d", filepath.Base(path), v, chunkRecFormat)
	}
	n := int(binary.LittleEndian.Uint32(b[8:]))
	if len(b)-12 != 12*n {
		return nil, fmt.Errorf("%s: %d bytes for %d chunks", filepath.Base(path), len(b)-12, n)
	}
	out := make([]Chunk, n)
	for i := range out {
		r := b[12+12*i:]
		out[i] = Chunk{ID: i, PageID: int(int32(binary.LittleEndian.Uint32(r))), Ord: int(binary.LittleEndian.Uint32(r[4:])),
			Tokens: int(binary.LittleEndian.Uint32(r[8:]))}
	}
	return out, nil
}

// ChunkText returns chunk id's text, read from disk when the index's texts were left there.
func (ix *Index) ChunkText(id int) (string, error) {
	if ix.texts == nil {
		return ix.Chunks[id].Text, nil
	}
	return ix.texts.text(ix.texts.pages + id)
}

// PageMarkdown returns page id's markdown, read from disk when the index's texts were left there.
func (ix *Index) PageMarkdown(id int) (string, error) {
	if ix.texts == nil {
		return ix.Pages[id].Markdown, nil
	}
	return ix.texts.text(id)
}

// readTextsFrom drops the texts from memory, to be read from the texts file at path.
func (ix *Index) readTextsFrom(path string) error {
	t, err := openTexts(path, len(ix.Pages), len(ix.Chunks))
	if err != nil {
		return err
	}
	for i := range ix.Pages {
		ix.Pages[i].Markdown = ""
	}
	for i := range ix.Chunks {
		ix.Chunks[i].Text = ""
	}
	ix.texts = t
	return nil
}

// EachText calls yield with every page's markdown (page true, id the page's), then every chunk's text, in id
// order, reading a file on disk once from start to end.
func (ix *Index) EachText(yield func(page bool, id int, text string) error) error {
	if ix.texts == nil {
		for i := range ix.Pages {
			if err := yield(true, i, ix.Pages[i].Markdown); err != nil {
				return err
			}
		}
		for i := range ix.Chunks {
			if err := yield(false, i, ix.Chunks[i].Text); err != nil {
				return err
			}
		}
		return nil
	}
	np := ix.texts.pages
	return ix.texts.each(func(i int, s string) error {
		if i < np {
			return yield(true, i, s)
		}
		return yield(false, i-np, s)
	})
}

// copyTo stores the texts file an index reads from at path (see linkOrCopy).
func (t *diskTexts) copyTo(path string) error {
	return t.withFile(func(f *os.File) error { return linkOrCopy(f, path) })
}

// TextsOnDisk reports whether the index reads its texts from disk (LoadOptions.TextsOnDisk).
func (ix *Index) TextsOnDisk() bool { return ix.texts != nil }

// textsToDisk drops the pages' markdown and the chunks' texts from memory, to be read from the index's files
// when asked for (ChunkText, PageMarkdown), as LoadOptions.TextsOnDisk asks. It does nothing for an index that was not loaded from a version
// in the current format (built in memory, or written by an earlier release). Close releases the file.
func (ix *Index) textsToDisk() error {
	if ix.texts != nil || ix.dir == "" || ix.Manifest.Format < 2 {
		return nil
	}
	return ix.readTextsFrom(filepath.Join(ix.dir, textsFile))
}

// Close releases the file an index reads its texts from; later reads fail with ErrTextsClosed. It does nothing
// for an index that holds its texts in memory.
func (ix *Index) Close() error {
	if ix.texts == nil {
		return nil
	}
	return ix.texts.close()
}

// Whole returns ix with its texts in memory: ix itself when they are there, else a copy whose pages and chunks
// carry them, read from disk, ix unchanged (for the rare work that needs every text of a serving index: a
// backend sync).
func (ix *Index) Whole() (*Index, error) {
	if ix.texts == nil {
		return ix, nil
	}
	w := *ix
	w.texts = nil
	w.Pages = slices.Clone(ix.Pages)
	w.Chunks = slices.Clone(ix.Chunks)
	err := ix.texts.each(func(i int, s string) error {
		if i < ix.texts.pages {
			w.Pages[i].Markdown = s
		} else {
			w.Chunks[i-ix.texts.pages].Text = s
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("index: %w", err)
	}
	return &w, nil
}
