package index

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// texts returns every page's markdown and chunk's text, through the accessors.
func texts(t *testing.T, ix *Index) []string {
	t.Helper()
	var out []string
	for i := range ix.Pages {
		s, err := ix.PageMarkdown(i)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	for i := range ix.Chunks {
		s, err := ix.ChunkText(i)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

func TestTextsOnDisk(t *testing.T) {
	dir := t.TempDir()
	want := crawled("one")
	want.Chunks[1].Text = "" // an empty text reads back empty
	want.Pages[1].Markdown = "ü\n\x00 bytes as they are"
	ix := writeAndLoad(t, dir, want)
	if ix.TextsOnDisk() {
		t.Fatal("a loaded index reads its texts from disk before textsToDisk")
	}
	if err := ix.textsToDisk(); err != nil {
		t.Fatal(err)
	}
	if !ix.TextsOnDisk() {
		t.Fatal("textsToDisk left the texts in memory")
	}
	for _, p := range ix.Pages {
		if p.Markdown != "" {
			t.Errorf("page %d keeps its markdown in memory", p.ID)
		}
	}
	for _, c := range ix.Chunks {
		if c.Text != "" {
			t.Errorf("chunk %d keeps its text in memory", c.ID)
		}
	}
	if diff := cmp.Diff(texts(t, want), texts(t, ix)); diff != "" {
		t.Errorf("texts read from disk (-want +got):\n%s", diff)
	}
	// Written again, its texts file is stored as it is.
	again := t.TempDir()
	ix.Manifest.Version = "two"
	reread := writeAndLoad(t, again, ix)
	if diff := cmp.Diff(texts(t, want), texts(t, reread)); diff != "" {
		t.Errorf("texts of the index written from disk (-want +got):\n%s", diff)
	}
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := ix.ChunkText(0); !errors.Is(err, ErrTextsClosed) {
		t.Errorf("ChunkText after Close: %v, want ErrTextsClosed", err)
	}
	if err := ix.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}

	// An index built in memory keeps its texts there.
	mem := sample("two")
	if err := mem.textsToDisk(); err != nil || mem.TextsOnDisk() {
		t.Errorf("textsToDisk of an index built in memory: %v, on disk %v", err, mem.TextsOnDisk())
	}
}

// writeFormat0 writes ix as releases before format 2 did: markdown in pages.json, texts in chunks.json.
func writeFormat0(t *testing.T, dir string, ix *Index) {
	t.Helper()
	v := filepath.Join(dir, versionPrefix+ix.Manifest.Version)
	os.MkdirAll(v, 0o755)
	same := func(p *Page) any { return p }
	for _, err := range []error{
		writeJSON(filepath.Join(v, manifestFile), ix.Manifest),
		writeJSONArray(filepath.Join(v, pagesFile), ix.Pages, same),
		writeJSONArray(filepath.Join(v, chunksFile), ix.Chunks, func(c *Chunk) any { return c }),
		writeVectors(filepath.Join(v, summariesFile), ix.SummaryVectors),
		writeVectors(filepath.Join(v, chunkVecFile), ix.ChunkVectors),
		writeFileSynced(filepath.Join(v, embedderFile), ix.EmbedderState),
		writeFileSynced(filepath.Join(dir, currentFile), []byte(versionPrefix+ix.Manifest.Version+"\n")),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
}

func TestLoadFormat0(t *testing.T) {
	dir := t.TempDir()
	want := sample("old")
	writeFormat0(t, dir, want)
	got, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got, cmpopts.IgnoreUnexported(Index{})); diff != "" {
		t.Errorf("format 0 (-want +got):\n%s", diff)
	}
	// Its texts stay in memory (there is no texts file), and the index is written back in the current format.
	if err := got.textsToDisk(); err != nil || got.TextsOnDisk() {
		t.Errorf("textsToDisk of a format 0 index: %v, on disk %v", err, got.TextsOnDisk())
	}
	got.Manifest.Version = "new"
	again := writeAndLoad(t, dir, got)
	if again.Manifest.Format != Format || !cmp.Equal(texts(t, want), texts(t, again)) {
		t.Errorf("rewritten: format %d, texts %q", again.Manifest.Format, texts(t, again))
	}
}

func TestLoadRejectsUnknownFormat(t *testing.T) {
	dir := t.TempDir()
	ix := sample("future")
	ix.Manifest.Format = Format + 1
	writeFormat0(t, dir, ix)
	_, err := Load(dir)
	if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "format 3") {
		t.Fatalf("Load of format %d: %v, want ErrFormat naming it", Format+1, err)
	}
}

func TestLoadRejectsDamagedTexts(t *testing.T) {
	tests := []struct {
		name   string
		file   string
		damage func(b []byte) []byte
	}{
		{"texts truncated", textsFile, func(b []byte) []byte { return b[:len(b)-1] }},
		{"texts grown", textsFile, func(b []byte) []byte { return append(b, 'x') }},
		{"texts header only", textsFile, func(b []byte) []byte { return b[:textsHeader] }},
		{"texts of another format", textsFile, func(b []byte) []byte { b[4] = 9; return b }},
		{"texts of another index", textsFile, func(b []byte) []byte { b[8]++; return b }},
		{"offsets backwards", textsFile, func(b []byte) []byte { b[textsHeader+8] = 0xff; return b }},
		{"not a texts file", textsFile, func(b []byte) []byte { return []byte("{}") }},
		{"chunk records truncated", chunkRecFile, func(b []byte) []byte { return b[:len(b)-4] }},
		{"chunk records of another format", chunkRecFile, func(b []byte) []byte { b[4] = 9; return b }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := Write(dir, sample("one")); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, "v-one", tt.file)
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, tt.damage(b), 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := Load(dir); err == nil {
				t.Fatal("Load accepted damaged texts")
			}
		})
	}
}

func TestSpill(t *testing.T) {
	want := crawled("one")
	ix := crawled("one")
	dir := t.TempDir()
	s, err := NewSpill(filepath.Join(dir, "spill"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// Texts come in any order, some never kept; each reads back before and after others are added.
	if _, err := s.Add("a page dropped as a duplicate"); err != nil {
		t.Fatal(err)
	}
	var pages, chunks []TextRef
	for i := len(ix.Chunks) - 1; i >= 0; i-- {
		ref, err := s.Add(ix.Chunks[i].Text)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := s.Read(ref); err != nil || got != ix.Chunks[i].Text {
			t.Fatalf("Read just after Add = %q, %v", got, err)
		}
		chunks = append([]TextRef{ref}, chunks...)
	}
	for i := range ix.Pages {
		ref, err := s.Add(ix.Pages[i].Markdown)
		if err != nil {
			t.Fatal(err)
		}
		pages = append(pages, ref)
	}
	if got, err := s.Read(chunks[0]); err != nil || got != want.Chunks[0].Text {
		t.Errorf("Read = %q, %v", got, err)
	}
	if err := s.Seal(filepath.Join(dir, "texts.bin"), ix, pages, chunks[1:]); err == nil {
		t.Error("Seal accepted too few chunk texts")
	}
	if err := s.Seal(filepath.Join(dir, "texts.bin"), ix, pages, chunks); err != nil {
		t.Fatal(err)
	}
	if !ix.TextsOnDisk() || ix.Pages[0].Markdown != "" || ix.Chunks[0].Text != "" {
		t.Fatal("Seal left the texts in memory")
	}
	if diff := cmp.Diff(texts(t, want), texts(t, ix)); diff != "" {
		t.Errorf("sealed texts (-want +got):\n%s", diff)
	}
	var each []string
	err = ix.EachText(func(page bool, id int, text string) error {
		if page != (len(each) < len(ix.Pages)) {
			t.Errorf("text %d: page %v", len(each), page)
		}
		each = append(each, text)
		return nil
	})
	if err != nil || !cmp.Equal(each, texts(t, want)) {
		t.Errorf("EachText = %q, %v", each, err)
	}
	out := t.TempDir()
	if err := Write(out, ix); err != nil {
		t.Fatal(err)
	}
	ix.Close()
	got, err := Load(out)
	if err != nil {
		t.Fatal(err)
	}
	want.Manifest.Format = Format
	if diff := cmp.Diff(want, got, cmpopts.IgnoreUnexported(Index{})); diff != "" {
		t.Errorf("written from sealed texts (-want +got):\n%s", diff)
	}
}

// TestSpillTextRefs seals texts that stay in an earlier version's texts file (PageTextRef, ChunkTextRef): all of
// them in that file's order make the new texts file that file itself, and mixed with texts added to the spill
// they are copied from it.
func TestSpillTextRefs(t *testing.T) {
	dir := t.TempDir()
	if err := Write(dir, crawled("one")); err != nil {
		t.Fatal(err)
	}
	prev, err := LoadWith(dir, LoadOptions{TextsOnDisk: true})
	if err != nil {
		t.Fatal(err)
	}
	defer prev.Close()
	refs := func() (pages, chunks []TextRef) {
		for i := range prev.Pages {
			ref, ok := prev.PageTextRef(i)
			if !ok {
				t.Fatal("PageTextRef of an index reading its texts from disk: false")
			}
			pages = append(pages, ref)
		}
		for i := range prev.Chunks {
			ref, ok := prev.ChunkTextRef(i)
			if !ok {
				t.Fatal("ChunkTextRef of an index reading its texts from disk: false")
			}
			chunks = append(chunks, ref)
		}
		return pages, chunks
	}
	tmp := t.TempDir()
	s, err := NewSpill(filepath.Join(tmp, "spill"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()

	pages, chunks := refs()
	if got, err := s.Read(chunks[1]); err != nil || got != "a1" {
		t.Errorf("Read of an earlier version's text = %q, %v", got, err)
	}
	same := crawled("one")
	if err := s.Seal(filepath.Join(tmp, "same.bin"), same, pages, chunks); err != nil {
		t.Fatal(err)
	}
	a, err1 := os.Stat(filepath.Join(tmp, "same.bin"))
	b, err2 := os.Stat(filepath.Join(prev.Dir(), textsFile))
	if err1 != nil || err2 != nil || !os.SameFile(a, b) {
		t.Errorf("texts all as before: not the earlier texts file (%v, %v)", err1, err2)
	}
	if diff := cmp.Diff(texts(t, crawled("one")), texts(t, same)); diff != "" {
		t.Errorf("texts all as before (-want +got):\n%s", diff)
	}

	// Page B changes: its markdown and chunk are added, the rest stay where they are.
	changed := crawled("two")
	changed.Pages[1].Markdown, changed.Chunks[2].Text = "# B, changed", "b0 changed"
	want := texts(t, changed)
	pages, chunks = refs()
	if pages[1], err = s.Add("# B, changed"); err == nil {
		chunks[2], err = s.Add("b0 changed")
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Seal(filepath.Join(tmp, "changed.bin"), changed, pages, chunks); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, texts(t, changed)); diff != "" {
		t.Errorf("texts partly as before (-want +got):\n%s", diff)
	}
	prev.Close()
	if _, err := s.Read(chunks[0]); !errors.Is(err, ErrTextsClosed) {
		t.Errorf("Read of a closed index's text: %v, want ErrTextsClosed", err)
	}
}
