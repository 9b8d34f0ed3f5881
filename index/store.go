package index

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"
)

// ErrNoIndex is returned by Load when the directory holds no complete index version.
var ErrNoIndex = errors.New("no index")

// Format is the layout Write uses: pages.json holds the page records without their markdown, chunks.bin the
// chunk records, texts.bin every text (see texts.go). Load also reads format 0, the JSON-only layout of earlier
// releases (pages.json with markdown, chunks.json with texts); the next ingest rewrites such an index.
const Format = 2

// ErrFormat is returned by Load for an index written in a layout this binary does not know.
var ErrFormat = errors.New("unknown index format")

const (
	currentFile   = "CURRENT"
	manifestFile  = "manifest.json"
	pagesFile     = "pages.json"
	chunksFile    = "chunks.json" // format 0 (chunks.bin and texts.bin since format 2)
	summariesFile = "summaries.f32"
	chunkVecFile  = "chunks.f32"
	embedderFile  = "embedder.bin"
	crawlFile     = "crawl.json"
	versionPrefix = "v-"
)

// DefaultKeepVersions is how many versions Write keeps on disk: the new one, the one it replaced, and one more to
// switch back to (see Activate).
const DefaultKeepVersions = 3

// WriteOptions tune Write. The zero value keeps DefaultKeepVersions versions.
type WriteOptions struct {
	// Keep is how many complete versions stay after a write: the new one, the one it replaces (a reader that
	// resolved CURRENT just before the switch still finds its files), the Protect ones, then the most recently
	// built others up to Keep. 0 means DefaultKeepVersions; values under 2 keep 2.
	Keep int
	// Protect names versions (manifest versions, without the "v-") that are never removed, whatever Keep says:
	// the one a server still answers from, say, when CURRENT already names another.
	Protect []string
	// Files are derived files to store with the version.
	Files []File
}

// File is a file derived from an index that Write stores in the version's directory beside the index's own, so
// that it appears with the version, atomically: the search structures retrieval builds from the texts, say.
type File struct {
	// Name is the file's name; it must not be one of the index's own.
	Name  string
	Write func(w io.Writer) error
}

// Write stores ix as a new version under dir and makes it current, keeping DefaultKeepVersions versions. The
// manifest's Version must be set.
func Write(dir string, ix *Index) error { return WriteWith(dir, ix, WriteOptions{}) }

// WriteWith is Write with options. Versions beyond opts.Keep, and version directories that are not complete
// (a crash between writing and renaming leaves none, but a copy may), are removed after CURRENT is replaced.
func WriteWith(dir string, ix *Index, opts WriteOptions) error {
	if ix.Manifest.Version == "" {
		return errors.New("write index: manifest has no version")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("write index: %w", err)
	}
	previous, _ := readCurrent(dir)
	tmp, err := os.MkdirTemp(dir, tempPrefix)
	if err != nil {
		return fmt.Errorf("write index: %w", err)
	}
	defer os.RemoveAll(tmp) // no-op after the rename
	if err := writeFiles(tmp, ix); err != nil {
		return fmt.Errorf("write index: %w", err)
	}
	for _, f := range opts.Files {
		if _, err := os.Stat(filepath.Join(tmp, f.Name)); err == nil || f.Name != filepath.Base(f.Name) || f.Name == currentFile {
			return fmt.Errorf("write index: derived file %q would replace one of the index's", f.Name)
		}
		err := writeFileWith(filepath.Join(tmp, f.Name), func(w *bufio.Writer) error { return f.Write(w) })
		if err != nil {
			return fmt.Errorf("write index: %s: %w", f.Name, err)
		}
	}
	name := versionPrefix + ix.Manifest.Version
	final := filepath.Join(dir, name)
	if name == previous {
		// Same content: keep the live copy, which readers may hold open.
		return nil
	}
	if err := os.RemoveAll(final); err != nil {
		return fmt.Errorf("write index: %w", err)
	}
	if err := os.Rename(tmp, final); err != nil {
		return fmt.Errorf("write index: %w", err)
	}
	if err := writeFileAtomic(filepath.Join(dir, currentFile), []byte(name+"\n")); err != nil {
		return fmt.Errorf("write index: %w", err)
	}
	prune(dir, name, previous, opts)
	return nil
}

// tempPrefix starts the names of what writes and ingests keep in the index directory while they run (a version
// being written, the texts of an ingest); staleTemp is the age after which one was left by a process that died,
// a day being far longer than any of them runs.
const (
	tempPrefix = ".tmp-"
	staleTemp  = 24 * time.Hour
)

// prune removes the versions under dir that opts does not keep besides current and previous, and temporary
// directories left by writes and ingests that died. Failures only leave a version behind, which the next write
// tries again.
func prune(dir, current, previous string, opts WriteOptions) {
	keep := opts.Keep
	if keep == 0 {
		keep = DefaultKeepVersions
	}
	keep = max(keep, 2)
	kept := map[string]bool{current: true, previous: true}
	for _, v := range opts.Protect {
		kept[versionPrefix+v] = true
	}
	var others []Version
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		n := e.Name()
		if strings.HasPrefix(n, tempPrefix) {
			if info, err := e.Info(); err == nil && time.Since(info.ModTime()) > staleTemp {
				os.RemoveAll(filepath.Join(dir, n))
			}
			continue
		}
		if !e.IsDir() || !strings.HasPrefix(n, versionPrefix) || kept[n] {
			continue
		}
		v, err := readVersion(dir, n)
		if err != nil {
			os.RemoveAll(filepath.Join(dir, n))
			continue
		}
		others = append(others, v)
	}
	sortVersions(others)
	room := keep - 1 // the current version
	if previous != "" && previous != current {
		room--
	}
	for _, v := range others {
		if room > 0 {
			room--
			continue
		}
		os.RemoveAll(filepath.Join(dir, versionPrefix+v.Version))
	}
}

// Load reads the current version under dir, its files side by side.
func Load(dir string) (*Index, error) { return LoadWith(dir, LoadOptions{}) }

// LoadOptions tune LoadWith; the zero value is Load.
type LoadOptions struct {
	// Gently reads the files one at a time, for a process that keeps serving meanwhile: slower, it leaves the
	// other cores to the requests in flight.
	Gently bool
	// TextsOnDisk leaves the texts in the version's files, as textsToDisk does, without reading them first.
	TextsOnDisk bool
	// MapVectors maps the vector files into memory instead of reading them: the rows are then read-only and
	// valid only while the Index (or a copy of it) is reachable (see MapFile), so whatever takes rows of it
	// (ingest's next version) must hold the Index as long as it uses them.
	MapVectors bool
}

// Dir returns the version directory the index was loaded from, or "" for an index built in memory.
func (ix *Index) Dir() string { return ix.dir }

// LoadWith reads the current version under dir as opts say.
func LoadWith(dir string, opts LoadOptions) (*Index, error) {
	name, err := readCurrent(dir)
	if err != nil {
		return nil, fmt.Errorf("load index %s: %w", dir, err)
	}
	ix, err := loadVersion(filepath.Join(dir, name), opts)
	if err != nil {
		return nil, fmt.Errorf("load index %s: %w", dir, err)
	}
	return ix, nil
}

// PageURLs returns the URLs of the pages of the current version under dir, in page order, reading neither its
// texts nor its vectors.
func PageURLs(dir string) ([]string, error) {
	ix, err := LoadWith(dir, LoadOptions{TextsOnDisk: true, MapVectors: true})
	if err != nil {
		return nil, err
	}
	return ix.PageURLs(), nil
}

// PageURLs returns the URLs of the index's pages, in page order.
func (ix *Index) PageURLs() []string {
	urls := make([]string, len(ix.Pages))
	for i, p := range ix.Pages {
		urls[i] = p.URL
	}
	return urls
}

// LoadManifest reads only the current version's manifest.
func LoadManifest(dir string) (*Manifest, error) {
	name, err := readCurrent(dir)
	if err != nil {
		return nil, fmt.Errorf("load manifest %s: %w", dir, err)
	}
	var m Manifest
	if err := readJSON(filepath.Join(dir, name, manifestFile), &m); err != nil {
		return nil, fmt.Errorf("load manifest %s: %w", dir, err)
	}
	return &m, nil
}

// Current names the version directory that CURRENT points at under dir. It changes with every Write that
// changes the content, and costs one small read, so a server can poll it to notice a new version.
func Current(dir string) (string, error) {
	name, err := readCurrent(dir)
	if err != nil {
		return "", fmt.Errorf("index %s: %w", dir, err)
	}
	return name, nil
}

func readCurrent(dir string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, currentFile))
	if errors.Is(err, os.ErrNotExist) {
		return "", ErrNoIndex
	}
	if err != nil {
		return "", err
	}
	name := strings.TrimSpace(string(b))
	if !strings.HasPrefix(name, versionPrefix) || strings.ContainsAny(name, `/\`) {
		return "", fmt.Errorf("%w: bad CURRENT %q", ErrNoIndex, name)
	}
	return name, nil
}

func writeFiles(dir string, ix *Index) error {
	m := ix.Manifest
	m.Format = Format
	if err := writeJSON(filepath.Join(dir, manifestFile), m); err != nil {
		return err
	}
	var g errgroup.Group
	g.Go(func() error {
		return writeJSONArray(filepath.Join(dir, pagesFile), ix.Pages, func(p *Page) any {
			r := *p
			r.Markdown = "" // in texts.bin
			return &r
		})
	})
	g.Go(func() error { return writeChunkRecords(filepath.Join(dir, chunkRecFile), ix.Chunks) })
	g.Go(func() error {
		if ix.texts != nil { // read from a file already in the layout: store it as it is
			return ix.texts.copyTo(filepath.Join(dir, textsFile))
		}
		return writeTexts(filepath.Join(dir, textsFile), ix)
	})
	g.Go(func() error {
		if err := writeVectors(filepath.Join(dir, summariesFile), ix.SummaryVectors); err != nil {
			return err
		}
		if ix.chunkVecs.same(ix.ChunkVectors) { // a file in the layout already: store it as it is
			return linkOrCopyPath(ix.chunkVecs.path, filepath.Join(dir, chunkVecFile))
		}
		return writeVectors(filepath.Join(dir, chunkVecFile), ix.ChunkVectors)
	})
	if ix.EmbedderState != nil {
		g.Go(func() error { return writeFileSynced(filepath.Join(dir, embedderFile), ix.EmbedderState) })
	}
	if ix.Crawl != nil {
		g.Go(func() error { return writeJSON(filepath.Join(dir, crawlFile), ix.Crawl) })
	}
	if err := g.Wait(); err != nil {
		return err
	}
	return syncDir(dir)
}

func loadVersion(dir string, opts LoadOptions) (*Index, error) {
	ix := &Index{dir: dir}
	if err := readJSON(filepath.Join(dir, manifestFile), &ix.Manifest); err != nil {
		return nil, err
	}
	if f := ix.Manifest.Format; f != 0 && f != Format {
		return nil, fmt.Errorf("%w: %s is in format %d, this ragproxy reads formats 0 and %d; use the release that "+
			"wrote it (%s) or a newer one", ErrFormat, filepath.Base(dir), f, Format, ix.Manifest.RagproxyVersion)
	}
	// Decode the files side by side.
	var g errgroup.Group
	if opts.Gently {
		g.SetLimit(1)
	}
	g.Go(func() (err error) {
		ix.Pages, err = readJSONArray[Page](filepath.Join(dir, pagesFile), ix.Manifest.Pages)
		return err
	})
	g.Go(func() (err error) {
		if ix.Manifest.Format == 0 {
			ix.Chunks, err = readJSONArray[Chunk](filepath.Join(dir, chunksFile), ix.Manifest.Chunks)
		} else {
			ix.Chunks, err = readChunkRecords(filepath.Join(dir, chunkRecFile))
		}
		return err
	})
	vectors := readVectors
	if opts.MapVectors {
		vectors = mapVectors
	}
	var maps [2]*mapping
	g.Go(func() (err error) {
		ix.SummaryVectors, maps[0], err = vectors(filepath.Join(dir, summariesFile))
		return err
	})
	g.Go(func() (err error) {
		ix.ChunkVectors, maps[1], err = vectors(filepath.Join(dir, chunkVecFile))
		return err
	})
	g.Go(func() (err error) {
		ix.EmbedderState, err = os.ReadFile(filepath.Join(dir, embedderFile))
		if errors.Is(err, os.ErrNotExist) {
			err = nil
		}
		return err
	})
	g.Go(func() error {
		var c CrawlRecord
		err := readJSON(filepath.Join(dir, crawlFile), &c)
		switch {
		case errors.Is(err, os.ErrNotExist):
			return nil
		case err != nil:
			return err
		}
		ix.Crawl = &c
		return nil
	})
	if err := g.Wait(); err != nil {
		return nil, err
	}
	for _, m := range maps {
		if m != nil {
			ix.maps = append(ix.maps, m)
		}
	}
	if err := ix.validate(); err != nil {
		return nil, err
	}
	switch {
	case ix.Manifest.Format == 0:
	case opts.TextsOnDisk:
		if err := ix.textsToDisk(); err != nil {
			return nil, err
		}
	default:
		if err := readTextsInto(filepath.Join(dir, textsFile), ix); err != nil {
			return nil, err
		}
	}
	return ix, nil
}

// validate checks the cross-references a reader relies on, so a damaged index fails at load, not at query time.
func (ix *Index) validate() error {
	if len(ix.Pages) != ix.Manifest.Pages || len(ix.Chunks) != ix.Manifest.Chunks {
		return fmt.Errorf("manifest counts %d pages, %d chunks; files hold %d, %d",
			ix.Manifest.Pages, ix.Manifest.Chunks, len(ix.Pages), len(ix.Chunks))
	}
	if len(ix.SummaryVectors) != len(ix.Pages) || len(ix.ChunkVectors) != len(ix.Chunks) {
		return fmt.Errorf("vector counts %d, %d do not match %d pages, %d chunks",
			len(ix.SummaryVectors), len(ix.ChunkVectors), len(ix.Pages), len(ix.Chunks))
	}
	for i, p := range ix.Pages {
		if p.ID != i {
			return fmt.Errorf("page %d has id %d", i, p.ID)
		}
		for _, l := range p.Links {
			if l < 0 || l >= len(ix.Pages) {
				return fmt.Errorf("page %d links to missing page %d", i, l)
			}
		}
		for _, v := range p.Versions {
			if v < 0 || v >= len(ix.Pages) || v == i {
				return fmt.Errorf("page %d has a missing version %d", i, v)
			}
		}
		for _, c := range p.Chunks {
			if c < 0 || c >= len(ix.Chunks) || ix.Chunks[c].PageID != i {
				return fmt.Errorf("page %d lists chunk %d that is not its own", i, c)
			}
		}
	}
	for i, c := range ix.Chunks {
		if c.ID != i || c.PageID < 0 || c.PageID >= len(ix.Pages) {
			return fmt.Errorf("chunk %d has id %d, page %d", i, c.ID, c.PageID)
		}
	}
	if c := ix.Crawl; c != nil {
		if len(c.Links) != len(ix.Pages) {
			return fmt.Errorf("crawl record has links of %d pages, want %d", len(c.Links), len(ix.Pages))
		}
		for i, ls := range c.Links {
			for _, l := range ls {
				if l < 0 || int(l) >= len(c.URLs) {
					return fmt.Errorf("crawl record: page %d links to URL %d of %d", i, l, len(c.URLs))
				}
			}
		}
	}
	return nil
}
