package index

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"sync"
)

// Spill holds texts on disk while an index is being built, so that a large site's cleaned pages and chunks wait
// there rather than in memory: ingest adds each page's markdown as it is cleaned and each chunk's text as it is
// split, then seals the ones it keeps into a texts file the index reads from. It is safe for concurrent use.
type Spill struct {
	mu  sync.Mutex
	f   *os.File
	w   *bufio.Writer
	off int64 // bytes added, flushed or not
}

// TextRef is a text in a Spill, or in the texts file of an index (PageTextRef, ChunkTextRef), which a Spill
// reads and seals as it does its own: a re-ingest keeps its unchanged pages' texts where they are instead of
// adding copies.
type TextRef struct {
	Off int64
	Len int64
	in  *diskTexts // the texts file the text is in; nil: the spill
}

// PageTextRef returns where page id's markdown is in the texts file ix reads from, and false when ix holds its
// texts in memory. The reference is valid until ix is closed.
func (ix *Index) PageTextRef(id int) (TextRef, bool) { return ix.textRef(id) }

// ChunkTextRef is PageTextRef for chunk id's text.
func (ix *Index) ChunkTextRef(id int) (TextRef, bool) {
	if ix.texts == nil {
		return TextRef{}, false
	}
	return ix.textRef(ix.texts.pages + id)
}

func (ix *Index) textRef(i int) (TextRef, bool) {
	t := ix.texts
	if t == nil {
		return TextRef{}, false
	}
	return TextRef{Off: t.dataAt + int64(t.offs[i]), Len: int64(t.offs[i+1] - t.offs[i]), in: t}, true
}

// NewSpill creates the spill file at path.
func NewSpill(path string) (*Spill, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, fmt.Errorf("index: spill: %w", err)
	}
	return &Spill{f: f, w: bufio.NewWriterSize(f, 1<<20)}, nil
}

// Add appends text.
func (s *Spill) Add(text string) (TextRef, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ref := TextRef{Off: s.off, Len: int64(len(text))}
	if _, err := s.w.WriteString(text); err != nil {
		return TextRef{}, fmt.Errorf("index: spill: %w", err)
	}
	s.off += ref.Len
	return ref, nil
}

// Read returns the text at ref.
func (s *Spill) Read(ref TextRef) (string, error) {
	if ref.in != nil {
		return ref.in.readAt(ref.Off, ref.Len)
	}
	if err := s.flushed(ref.Off + ref.Len); err != nil {
		return "", err
	}
	text, err := readString(s.f, ref.Off, ref.Len)
	if err != nil {
		return "", fmt.Errorf("index: spill: %w", err)
	}
	return text, nil
}

// flushed makes sure the file holds the first end bytes added.
func (s *Spill) flushed(end int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if end > s.off-int64(s.w.Buffered()) {
		if err := s.w.Flush(); err != nil {
			return fmt.Errorf("index: spill: %w", err)
		}
	}
	return nil
}

// Close closes the spill file; the caller removes it.
func (s *Spill) Close() error { return s.f.Close() }

// Seal writes the texts file at path for ix, with pages[i] as page i's markdown and chunks[i] as chunk i's text,
// and makes ix read its texts from it (as textsToDisk does). ix's in-memory texts are dropped.
func (s *Spill) Seal(path string, ix *Index, pages, chunks []TextRef) error {
	if len(pages) != len(ix.Pages) || len(chunks) != len(ix.Chunks) {
		return fmt.Errorf("index: seal: %d page and %d chunk texts for %d pages and %d chunks", len(pages), len(chunks),
			len(ix.Pages), len(ix.Chunks))
	}
	if err := s.flushed(s.off); err != nil {
		return err
	}
	refs := append(append(make([]TextRef, 0, len(pages)+len(chunks)), pages...), chunks...)
	if t := wholeFile(refs); t != nil {
		// Every text where an earlier version has it, in its order (an unchanged re-ingest): its file is the
		// texts file.
		if err := t.copyTo(path); err != nil {
			return fmt.Errorf("index: seal: %w", err)
		}
		if err := ix.readTextsFrom(path); err != nil {
			return fmt.Errorf("index: seal: %w", err)
		}
		return nil
	}
	err := writeFileWith(path, func(w *bufio.Writer) error {
		hdr := make([]byte, textsHeader, textsHeader+8*(len(refs)+1))
		copy(hdr, textsMagic)
		binary.LittleEndian.PutUint32(hdr[4:], textsFormat)
		binary.LittleEndian.PutUint32(hdr[8:], uint32(len(pages)))
		binary.LittleEndian.PutUint32(hdr[12:], uint32(len(chunks)))
		var off uint64
		hdr = binary.LittleEndian.AppendUint64(hdr, 0)
		for _, r := range refs {
			off += uint64(r.Len)
			hdr = binary.LittleEndian.AppendUint64(hdr, off)
		}
		w.Write(hdr)
		for _, r := range refs {
			if r.in != nil {
				if err := r.in.copyText(w, r.Off, r.Len); err != nil {
					return err
				}
				continue
			}
			if _, err := io.Copy(w, io.NewSectionReader(s.f, r.Off, r.Len)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("index: seal: %w", err)
	}
	if err := ix.readTextsFrom(path); err != nil {
		return fmt.Errorf("index: seal: %w", err)
	}
	return nil
}

// wholeFile returns the texts file refs are, text for text and in order, or nil.
func wholeFile(refs []TextRef) *diskTexts {
	if len(refs) == 0 {
		return nil
	}
	t := refs[0].in
	if t == nil || len(refs) != len(t.offs)-1 {
		return nil
	}
	for i, r := range refs {
		if r.in != t || r.Off != t.dataAt+int64(t.offs[i]) || r.Len != int64(t.offs[i+1]-t.offs[i]) {
			return nil
		}
	}
	return t
}
