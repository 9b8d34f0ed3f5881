package retrieval

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/ragproxy/ragproxy/index"
	"github.com/ragproxy/ragproxy/retrieval/lexical"
	"github.com/ragproxy/ragproxy/retrieval/vector"
	"github.com/ragproxy/ragproxy/textnorm"
)

// SearchFile is the file, in an index version's directory, that holds the version's search structures as
// WriteSearch builds them, so that a server reads them instead of building them from every text of the site
// (at 7,000 pages, most of a start-up).
const SearchFile = "search.bin"

// The search file is
//
//	"RPSEARCH", searchFormat, index.SearchTextVersion (uint32 each, little-endian)
//	the index version: length (uint32) and bytes
//	six sections, each a length (uint64) and bytes: the chunk, page and title BM25 indexes (lexical.ReadBM25),
//	the lexicon, the chunks' text keys (uint64 each), the chunk vectors' IVF lists (vector.ReadIVF; no lists
//	under vector.IVFMinRows chunks, where exact search is fast)
//
// each part starting at a multiple of eight bytes. searchFormat changes whenever the layout, or the way the
// structures are built from the texts (analysis, search texts, lexicon), does: a file of another format is
// ignored and the structures are built again.
const (
	searchMagic    = "RPSEARCH"
	searchFormat   = 10 // 10: the decimal digits of every script are read as ASCII's
	searchSections = 6
)

// searchParts are the search structures that retrieval builds from an index's texts.
type searchParts struct {
	chunkBM25 *lexical.BM25
	pageBM25  *lexical.BM25
	titles    *lexical.BM25
	lex       *lexicon
	textKeys  []uint64 // per chunk, a hash of its trimmed text: chunks that say the same are one passage
	// The chunk vectors' approximate index: built, or read from its binary form once the vectors are loaded.
	ann     *vector.IVF
	annData []byte
}

// buildParts builds the search structures from ix's texts (in memory or on disk); side by side when parallel
// is set (they are independent of each other), else one after another.
func buildParts(ix *index.Index, parallel bool, an lexical.Analyzer) (*searchParts, error) {
	sp := &searchParts{}
	var errs [6]error
	var wg sync.WaitGroup
	do := func(f func()) {
		if parallel {
			wg.Go(f)
		} else {
			f()
		}
	}
	do(func() { sp.chunkBM25, errs[0] = laidOut(chunkPostings(ix, an)) })
	do(func() { sp.pageBM25, errs[1] = laidOut(pagePostings(ix, an)) })
	do(func() { sp.titles, errs[2] = laidOut(titlePostings(ix, an)) })
	do(func() { sp.lex, errs[3] = newLexicon(ix) })
	do(func() { sp.textKeys, errs[4] = textKeys(ix) })
	do(func() { sp.ann, errs[5] = vector.NewIVF(ix.ChunkVectors, vector.IVFConfig{}) })
	wg.Wait()
	if err := errors.Join(errs[:]...); err != nil {
		return nil, err
	}
	sp.setLanguages(ix)
	return sp, nil
}

// textReader reads an index's texts for the structures built from them, keeping the first error (the builders
// take texts, not errors). One reader serves one goroutine.
type textReader struct {
	ix  *index.Index
	err error
}

func (t *textReader) keep(s string, err error) string {
	if err != nil && t.err == nil {
		t.err = err
	}
	return s
}

func (t *textReader) page(id int) string { return t.keep(t.ix.PageMarkdown(id)) }

// chunkPostings indexes each chunk's index.SearchText.
func chunkPostings(ix *index.Index, an lexical.Analyzer) (*lexical.Postings, error) {
	tr := &textReader{ix: ix}
	text := index.ChunkSearchText(ix)
	p := lexical.IndexFunc(len(ix.Chunks), func(i int) string { return tr.keep(text(i)) }, lexical.Config{Lang: chunkLangs(ix), Analyzer: an})
	return p, tr.err
}

// pagePostings indexes each page's index.PageSearchText.
func pagePostings(ix *index.Index, an lexical.Analyzer) (*lexical.Postings, error) {
	tr := &textReader{ix: ix}
	p := lexical.IndexFunc(len(ix.Pages), func(i int) string { return tr.keep(index.PageSearchTextOf(ix, i)) },
		lexical.Config{Lang: pageLangs(ix), Analyzer: an})
	return p, tr.err
}

// titlePostings indexes each page's title, URL path and headings (pageFields).
func titlePostings(ix *index.Index, an lexical.Analyzer) (*lexical.Postings, error) {
	tr := &textReader{ix: ix}
	p := lexical.IndexFunc(len(ix.Pages), func(i int) string { return pageFields(ix.Pages[i], tr.page(i)) },
		lexical.Config{Lang: pageLangs(ix), Analyzer: an})
	return p, tr.err
}

// setLanguages tells the BM25 indexes their documents' languages (lexical.BM25.SetLanguages), which an index in
// one language ignores.
func (sp *searchParts) setLanguages(ix *index.Index) {
	sp.chunkBM25.SetLanguages(chunkLangs(ix))
	sp.pageBM25.SetLanguages(pageLangs(ix))
	sp.titles.SetLanguages(pageLangs(ix))
}

// pageLangs gives the BM25 indexes of pages their languages; nil (every page English) for an index without
// another language, which keeps the analysis every index had before pages had languages.
func pageLangs(ix *index.Index) func(int) string {
	if !multilingual(ix) {
		return nil
	}
	return ix.PageLang
}

// chunkLangs is pageLangs for the chunks.
func chunkLangs(ix *index.Index) func(int) string {
	if !multilingual(ix) {
		return nil
	}
	return ix.ChunkLang
}

// multilingual reports whether some page of ix is not English.
func multilingual(ix *index.Index) bool {
	for i := range ix.Pages {
		if !textnorm.IsEnglish(ix.Pages[i].Lang) {
			return true
		}
	}
	return false
}

// laidOut is the BM25 index of postings built without error.
func laidOut(p *lexical.Postings, err error) (*lexical.BM25, error) {
	if err != nil {
		return nil, err
	}
	return p.BM25(), nil
}

// textKeys hashes every chunk's trimmed text (FNV-1a, 64 bits), so that passages repeated across pages are
// recognised without reading their texts.
func textKeys(ix *index.Index) ([]uint64, error) {
	keys := make([]uint64, len(ix.Chunks))
	h := fnv.New64a()
	err := ix.EachText(func(page bool, id int, text string) error {
		if !page {
			h.Reset()
			io.WriteString(h, strings.TrimSpace(text))
			keys[id] = h.Sum64()
		}
		return nil
	})
	return keys, err
}

// GroupedFile is the file, beside SearchFile, that holds the chunk vectors in the order of their IVF lists (a
// vector file: rows and length as uint32, then the values), which a server maps and searches in place of a copy
// of its own. It holds no rows for an index without lists.
const GroupedFile = "chunks.ivf.f32"

// WriteSearch builds the search structures of ix (its texts in memory or on disk) and writes them to w as
// SearchFile. The structures are built, written and dropped one at a time, so that ingest's peak memory grows by
// the largest (the chunks' BM25 index) rather than by all of them.
func WriteSearch(w io.Writer, ix *index.Index) error {
	return writeSearch(w, ix, func() (*vector.IVF, error) { return chunkLists(ix) })
}

// chunkLists clusters ix's chunk vectors into IVF lists (none under vector.IVFMinRows), searching them in place.
func chunkLists(ix *index.Index) (*vector.IVF, error) {
	return vector.NewIVF(ix.ChunkVectors, vector.IVFConfig{InPlace: true})
}

// SearchFilesOf are the files ingest stores with each version of ix (index.WriteOptions.Files): SearchFile and
// GroupedFile, from one clustering of the chunk vectors.
func SearchFilesOf(ix *index.Index) []index.File {
	var (
		once sync.Once
		ann  *vector.IVF
		err  error
	)
	lists := func() (*vector.IVF, error) {
		once.Do(func() { ann, err = chunkLists(ix) })
		return ann, err
	}
	// The grouped rows are written first: clustering and grouping read every chunk vector, which may be mapped
	// from a file (index.VectorFile), and the pages read are let go before the search structures are built.
	return []index.File{
		{Name: GroupedFile, Write: func(w io.Writer) error {
			ann, err := lists()
			if err != nil {
				return err
			}
			n := 0
			if ann.Lists() > 0 {
				n = ann.Len()
			}
			err = index.WriteVectorRows(w, n, ann.Dim(), ann.EachGrouped)
			ix.ReleaseMapped()
			return err
		}},
		{Name: SearchFile, Write: func(w io.Writer) error { return writeSearch(w, ix, lists) }},
	}
}

func writeSearch(w io.Writer, ix *index.Index, lists func() (*vector.IVF, error)) error {
	var b []byte
	b = append(b, searchMagic...)
	b = binary.LittleEndian.AppendUint32(b, searchFormat)
	b = binary.LittleEndian.AppendUint32(b, index.SearchTextVersion)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(ix.Manifest.Version)))
	b = pad8(append(b, ix.Manifest.Version...))
	if _, err := w.Write(b); err != nil {
		return err
	}
	section := func(size int, write func(w io.Writer) error) error {
		var n [8]byte
		binary.LittleEndian.PutUint64(n[:], uint64(size))
		if _, err := w.Write(n[:]); err != nil {
			return err
		}
		if err := write(w); err != nil {
			return err
		}
		_, err := w.Write(make([]byte, (8-size%8)%8))
		return err
	}
	bytes := func(b []byte) error {
		return section(len(b), func(w io.Writer) error { _, err := w.Write(b); return err })
	}
	// Each index is written from its postings, without the search layout: for the chunks it would be as large
	// again as the postings themselves.
	for _, build := range []func(*index.Index, lexical.Analyzer) (*lexical.Postings, error){chunkPostings, pagePostings, titlePostings} {
		p, err := build(ix, lexical.Analyzer{})
		if err == nil {
			err = section(p.BinarySize(), func(w io.Writer) error { _, err := p.WriteTo(w); return err })
		}
		if err != nil {
			return fmt.Errorf("retrieval: search file: %w", err)
		}
	}
	lx, err := newLexicon(ix)
	if err != nil {
		return fmt.Errorf("retrieval: search file: %w", err)
	}
	if err := bytes(lx.appendBinary(nil)); err != nil {
		return err
	}
	keys, err := textKeys(ix)
	if err != nil {
		return fmt.Errorf("retrieval: search file: %w", err)
	}
	if err := bytes(appendKeys(nil, keys)); err != nil {
		return err
	}
	// The lists alone: the rows are the index's vectors, grouped in GroupedFile.
	ann, err := lists()
	if err == nil {
		var b []byte
		if b, err = ann.AppendBinary(nil); err == nil {
			err = bytes(b)
		}
	}
	if err != nil {
		return fmt.Errorf("retrieval: search file: chunk lists: %w", err)
	}
	return nil
}

func appendKeys(b []byte, keys []uint64) []byte {
	for _, k := range keys {
		b = binary.LittleEndian.AppendUint64(b, k)
	}
	return b
}

func pad8(b []byte) []byte {
	for len(b)%8 != 0 {
		b = append(b, 0)
	}
	return b
}

// errStaleSearch reports a search file written for another index version or by another format.
var errStaleSearch = errors.New("search file is stale")

// readSearchFile reads the search structures stored with ix, or returns errStaleSearch (wrapped) when there is
// no usable file, and another error when the file is damaged.
func readSearchFile(ix *index.Index) (*searchParts, error) {
	if ix.Dir() == "" {
		return nil, fmt.Errorf("%w: the index was not loaded from disk", errStaleSearch)
	}
	data, err := ix.MapFile(SearchFile)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w: no %s", errStaleSearch, SearchFile)
	}
	if err != nil {
		return nil, err
	}
	sp, err := readParts(data, ix.Manifest.Version, len(ix.Pages), len(ix.Chunks))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", SearchFile, err)
	}
	sp.setLanguages(ix)
	return sp, nil
}

// readParts decodes a search file for the index version with the given counts. The BM25 indexes use data in
// place: it must not be modified afterwards, and must live as long as they do (a mapping of the
// file that lives as long as the index).
func readParts(data []byte, version string, pages, chunks int) (*searchParts, error) {
	if len(data) < 24 || string(data[:8]) != searchMagic {
		return nil, errors.New("not a search file")
	}
	if f, st := binary.LittleEndian.Uint32(data[8:]), binary.LittleEndian.Uint32(data[12:]); f != searchFormat || st != index.SearchTextVersion {
		return nil, fmt.Errorf("%w: format %d, search texts %d; this binary builds %d, %d", errStaleSearch, f, st,
			searchFormat, index.SearchTextVersion)
	}
	n := int(binary.LittleEndian.Uint32(data[16:]))
	if n > len(data)-20 {
		return nil, io.ErrUnexpectedEOF
	}
	if v := string(data[20 : 20+n]); v != version {
		return nil, fmt.Errorf("%w: written for version %q", errStaleSearch, v)
	}
	at := (20 + n + 7) &^ 7
	var sections [searchSections][]byte
	for i := range sections {
		if at+8 > len(data) {
			return nil, io.ErrUnexpectedEOF
		}
		size := binary.LittleEndian.Uint64(data[at:])
		if size > uint64(len(data)-at-8) {
			return nil, io.ErrUnexpectedEOF
		}
		sections[i] = data[at+8 : at+8+int(size)]
		at = (at + 8 + int(size) + 7) &^ 7
	}
	if at < len(data) {
		return nil, fmt.Errorf("%d bytes after the last section", len(data)-at)
	}
	sp := &searchParts{}
	var err error
	bms := []**lexical.BM25{&sp.chunkBM25, &sp.pageBM25, &sp.titles}
	docs := []int{chunks, pages, pages}
	for i, bm := range bms {
		if *bm, err = lexical.ReadBM25(sections[i]); err != nil {
			return nil, err
		}
		if (*bm).Len() != docs[i] {
			return nil, fmt.Errorf("BM25 index %d holds %d documents, want %d", i, (*bm).Len(), docs[i])
		}
	}
	if sp.lex, err = readLexicon(sections[3], pages); err != nil {
		return nil, fmt.Errorf("lexicon: %w", err)
	}
	sp.annData = sections[5]
	keys := sections[4]
	if len(keys) != 8*chunks {
		return nil, fmt.Errorf("%d bytes of text keys for %d chunks", len(keys), chunks)
	}
	sp.textKeys = make([]uint64, chunks)
	for i := range sp.textKeys {
		sp.textKeys[i] = binary.LittleEndian.Uint64(keys[8*i:])
	}
	return sp, nil
}

// appendBinary encodes what the lexicon counted (the rest is derived again on reading): its words' chunk
// counts, heading counts, acronyms and code names' definitions, each a count (uvarint) of entries, an entry a
// string (uvarint length and bytes) and a uvarint, a second string, or a count of pages and the pages (uvarints).
func (lx *lexicon) appendBinary(b []byte) []byte {
	str := func(s string) {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	// Sorted, so that the same site gives the same file.
	counts := func(m map[string]int) {
		b = binary.AppendUvarint(b, uint64(len(m)))
		for _, w := range slices.Sorted(maps.Keys(m)) {
			str(w)
			b = binary.AppendUvarint(b, uint64(m[w]))
		}
	}
	counts(lx.df)
	counts(lx.heading)
	b = binary.AppendUvarint(b, uint64(len(lx.acronyms)))
	for _, a := range slices.Sorted(maps.Keys(lx.acronyms)) {
		str(a)
		str(lx.acronyms[a])
	}
	b = binary.AppendUvarint(b, uint64(len(lx.defined)))
	for _, name := range slices.Sorted(maps.Keys(lx.defined)) {
		str(name)
		b = binary.AppendUvarint(b, uint64(len(lx.defined[name])))
		for _, p := range lx.defined[name] {
			b = binary.AppendUvarint(b, uint64(p))
		}
	}
	return b
}

// readLexicon decodes appendBinary's form for an index of the given pages.
func readLexicon(b []byte, pages int) (*lexicon, error) {
	var err error
	uvarint := func() int {
		if err != nil {
			return 0
		}
		v, n := binary.Uvarint(b)
		if n <= 0 || v > 1<<40 {
			err = io.ErrUnexpectedEOF
			return 0
		}
		b = b[n:]
		return int(v)
	}
	str := func() string {
		n := uvarint()
		if err != nil || n > len(b) {
			err = io.ErrUnexpectedEOF
			return ""
		}
		s := string(b[:n])
		b = b[n:]
		return s
	}
	counts := func() map[string]int {
		n := uvarint()
		if err != nil || n > len(b) {
			err = io.ErrUnexpectedEOF
			return nil
		}
		m := make(map[string]int, n)
		for range n {
			w := str()
			m[w] = uvarint()
			if err != nil {
				return nil
			}
		}
		return m
	}
	lx := newEmptyLexicon()
	lx.df = counts()
	lx.heading = counts()
	n := uvarint()
	if err == nil && n > len(b) {
		err = io.ErrUnexpectedEOF
	}
	for i := 0; err == nil && i < n; i++ {
		a := str()
		lx.acronyms[a] = str()
	}
	if n = uvarint(); err == nil && n > len(b) {
		err = io.ErrUnexpectedEOF
	}
	for i := 0; err == nil && i < n; i++ {
		name := str()
		k := uvarint()
		if err == nil && (k == 0 || k > maxDefinitions) {
			err = fmt.Errorf("%d definitions of %q", k, name)
		}
		defs := make([]int, 0, k)
		for j := 0; err == nil && j < k; j++ {
			if p := uvarint(); p < pages {
				defs = append(defs, p)
			} else if err == nil {
				err = fmt.Errorf("definition of %q on page %d of %d", name, p, pages)
			}
		}
		lx.defined[name] = defs
	}
	if err != nil {
		return nil, err
	}
	if len(b) != 0 {
		return nil, fmt.Errorf("%d bytes after the definitions", len(b))
	}
	lx.derive()
	return lx, nil
}

// readChunkLists rebuilds the chunk vectors' IVF from its binary form, searching the rows of ix's GroupedFile
// where they are mapped, or, for a version without that file, a copy of its own.
func readChunkLists(ix *index.Index, data []byte) (*vector.IVF, error) {
	if ix.Dir() == "" {
		return vector.ReadIVF(data, ix.ChunkVectors)
	}
	grouped, _, err := ix.MapVectorFile(GroupedFile)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return vector.ReadIVF(data, ix.ChunkVectors)
	case err != nil:
		return nil, err
	}
	x, err := vector.ReadIVFGrouped(data, ix.ChunkVectors, grouped)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", GroupedFile, err)
	}
	return x, nil
}
