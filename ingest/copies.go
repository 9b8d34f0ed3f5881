package ingest

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/ragproxy/ragproxy/index"
	"github.com/ragproxy/ragproxy/textnorm"
)

// A site that publishes its pages also publishes them as a PDF, the whole book or handbook in one file (the
// Debian Reference ships one per language beside its chapters). The PDF adds no fact the pages lack, and it
// competes with them for every question: its text is the pages' text without their structure, extracted line by
// line, and its chunks, taken from a document of several hundred pages, are cut where the extraction's page breaks
// fall. dropCopies leaves out a PDF most of whose text the site's other pages hold: of its word 5-grams (a sample,
// see copyShingles), at least copyContained. A PDF that only quotes a page or two (a form, a flyer) holds far
// less. A PDF left out is not in the index, so the version keeps a record of it (CopiesFile): the next ingest
// judges it again by the recorded sample while its bytes are unchanged, without parsing it, as an unchanged page is
// reused (a book's PDF takes seconds to parse; the Debian Reference's seven, a minute).
const (
	// copyShingleWords is the length of the word runs compared (w-shingles, as Broder's resemblance and
	// containment count them: "On the resemblance and containment of documents", 1997).
	copyShingleWords = 5
	// copySample keeps one shingle in copySample (by its hash), which bounds the memory of the site's set.
	copySample = 16
	// copyContained is the share of a PDF's sampled shingles that the other pages must hold for it to be a copy.
	copyContained = 0.5
	// copyMinShingles is the fewest sampled shingles a PDF must have to be judged: a short one is kept.
	copyMinShingles = 20
)

// CopiesFile is the file, in an index version's directory, that records the PDFs the ingest that built it left
// out as copies of the site's pages: a JSON array of {"url", "raw_hash", "shingles"}.
const CopiesFile = "copies.json"

// copyRecord is a PDF left out as a copy, by its URL and the hash of its bytes, with the sample of its text it
// was judged by: its sampled shingles (copyShingles) with their repeats, ascending, as little-endian uint64s
// (base64 in the JSON). The next ingest judges the unchanged PDF again by them against the pages it then has,
// without parsing it: when the pages no longer hold its text (their chapters rewritten or gone), the PDF is read
// and indexed.
type copyRecord struct {
	URL      string `json:"url"`
	RawHash  string `json:"raw_hash"`
	Shingles []byte `json:"shingles,omitempty"`
}

// dropCopies returns docs without the PDFs that copy the other pages (see copyContained), counting them as
// duplicates and recording them for the next ingest (r.copies). A PDF the previous version recorded, its bytes
// unchanged (d.copy), is judged by its recorded shingles, and read only when the pages no longer hold them. It
// reads the texts only when docs hold a PDF.
func (r *run) dropCopies(docs []*doc) ([]*doc, error) {
	hasPDF := false
	for _, d := range docs {
		hasPDF = hasPDF || d.pdf
	}
	if !hasPDF {
		return docs, nil
	}
	held := map[uint64]struct{}{}
	for _, d := range docs {
		if d.pdf {
			continue
		}
		text, err := r.markdownOf(d)
		if err != nil {
			return nil, err
		}
		copyShingles(text, func(h uint64) { held[h] = struct{}{} })
	}
	out := docs[:0:0]
	for _, d := range docs {
		if !d.pdf {
			out = append(out, d)
			continue
		}
		recorded := d.copy
		shingles := d.shingles
		if !recorded {
			text, err := r.markdownOf(d)
			if err != nil {
				return nil, err
			}
			shingles = shingleSet(text)
		}
		n, in := len(shingles)/8, 0
		for i := 0; i+8 <= len(shingles); i += 8 {
			if _, ok := held[binary.LittleEndian.Uint64(shingles[i:])]; ok {
				in++
			}
		}
		if n >= copyMinShingles && float64(in) >= copyContained*float64(n) {
			if !recorded {
				r.cfg.Logger.Info("PDF left out: the site's pages hold its text", "url", d.url, "held", float64(in)/float64(n))
			}
			r.copies = append(r.copies, copyRecord{URL: d.url, RawHash: d.rawHash, Shingles: shingles})
			r.report.Duplicates++
			continue
		}
		if recorded {
			// The pages no longer hold the copy's text: it is read now, and indexed as any PDF of its own.
			r.cfg.Logger.Info("PDF read: the site's pages no longer hold its text", "url", d.url, "held", float64(in)/float64(n))
			page := *d.page
			d.copy, d.shingles, d.page, d.hash = false, nil, nil, ""
			if d = r.cleanBody(nil, page, d); d == nil {
				r.report.Unreadable++
				continue
			}
		}
		out = append(out, d)
	}
	return out, nil
}

// shingleSet is text's sampled shingles (copyShingles) with their repeats, ascending, as little-endian uint64s.
func shingleSet(text string) []byte {
	var hs []uint64
	copyShingles(text, func(h uint64) { hs = append(hs, h) })
	slices.Sort(hs)
	out := make([]byte, 8*len(hs))
	for i, h := range hs {
		binary.LittleEndian.PutUint64(out[8*i:], h)
	}
	return out
}

// copiesFile is the version's CopiesFile of r.copies; none when there are none.
func (r *run) copiesFile() []index.File {
	if len(r.copies) == 0 {
		return nil
	}
	return []index.File{{Name: CopiesFile, Write: func(w io.Writer) error { _, err := w.Write(r.copiesJSON()); return err }}}
}

// copiesJSON is r.copies as CopiesFile holds them, by URL.
func (r *run) copiesJSON() []byte {
	copies := slices.Clone(r.copies)
	slices.SortFunc(copies, func(a, b copyRecord) int { return cmp.Compare(a.URL, b.URL) })
	b, _ := json.Marshal(copies) // strings and bytes: it cannot fail
	return append(b, '\n')
}

// refreshCopies brings the CopiesFile of the version in dir, which this run found unchanged and does not write
// again, up to r.copies: a PDF first left out by this run, or judged again from an older record, is then read no
// more. Only ingest reads the file, so it is replaced in the live version (written aside, then renamed).
func (r *run) refreshCopies(dir string) error {
	file := filepath.Join(dir, CopiesFile)
	old, err := os.ReadFile(file)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if len(r.copies) == 0 {
		if err == nil {
			return os.Remove(file)
		}
		return nil
	}
	b := r.copiesJSON()
	if bytes.Equal(old, b) {
		return nil
	}
	tmp := file + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, file)
}

// readCopies reads the copies the version in dir recorded, by URL; none when it recorded none.
func readCopies(dir string) (map[string]copyRecord, error) {
	if dir == "" {
		return nil, nil // an index not loaded from disk
	}
	b, err := os.ReadFile(filepath.Join(dir, CopiesFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", CopiesFile, err)
	}
	var copies []copyRecord
	if err := json.Unmarshal(b, &copies); err != nil {
		return nil, fmt.Errorf("read %s: %w", CopiesFile, err)
	}
	out := make(map[string]copyRecord, len(copies))
	for _, c := range copies {
		out[c.URL] = c
	}
	return out, nil
}

// markdownOf is d's markdown, from the spill or the previous version when it is there.
func (r *run) markdownOf(d *doc) (string, error) {
	if !d.spilled {
		return d.markdown, nil
	}
	return r.spill.Read(d.md)
}

// copyShingles calls yield with the sampled hashes of text's runs of copyShingleWords words (lowercase words as
// textnorm.Words gives them, so that markup and line breaks do not matter): FNV-1a over the run, kept when it
// falls in one bucket of copySample. A run of Chinese, Japanese or Korean characters, which Words gives as one
// word (they are written without spaces, and a PDF's line breaks cut the runs elsewhere than the page's markup
// does), counts as its overlapping character bigrams, as retrieval reads it.
func copyShingles(text string, yield func(uint64)) {
	const offset, prime = 14695981039346656037, 1099511628211
	var ring [copyShingleWords]uint64 // the hashes of the last words
	n := 0
	var starts []int // the byte offsets of a CJK word's characters
	add := func(w string) {
		h := uint64(offset)
		for i := 0; i < len(w); i++ {
			h = (h ^ uint64(w[i])) * prime
		}
		ring[n%copyShingleWords] = h
		n++
		if n < copyShingleWords {
			return
		}
		s := uint64(offset)
		for i := n - copyShingleWords; i < n; i++ {
			s = (s ^ ring[i%copyShingleWords]) * prime
		}
		if s%copySample == 0 {
			yield(s)
		}
	}
	textnorm.Words(text, func(w string) bool {
		if textnorm.ScriptLanguage(w) == "" {
			add(w)
			return true
		}
		starts = starts[:0]
		for i := range w {
			starts = append(starts, i)
		}
		starts = append(starts, len(w))
		if len(starts) == 2 {
			add(w) // one character
		}
		for k := 0; k+2 < len(starts); k++ {
			add(w[starts[k]:starts[k+2]])
		}
		return true
	})
}
