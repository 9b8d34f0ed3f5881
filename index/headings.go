package index

import (
	"fmt"
	"iter"
	"strings"
)

// HeadingTrails returns, for each chunk of one page (texts in page order), the markdown headings in force where
// the chunk starts, outermost first, joined by " > " (e.g. "Academic Policies > Grades > Grade I (Incomplete)").
// A passage alone often lacks what it is about; its heading trail says it, for search and for the reader.
func HeadingTrails(chunks []string) []string {
	var stack [7]string // stack[level] for levels 1..6
	out := make([]string, len(chunks))
	for i, text := range chunks {
		var parts []string
		for l := 1; l <= 6; l++ {
			if stack[l] != "" {
				parts = append(parts, stack[l])
			}
		}
		out[i] = strings.Join(parts, " > ")
		for level, text := range Headings(text) {
			stack[level] = text
			for l := level + 1; l <= 6; l++ {
				stack[l] = ""
			}
		}
	}
	return out
}

// Headings yields the level and text of each ATX heading of markdown text, outside fenced code. The text is as
// a reader sees it: without the closing "#" sequence, emphasis, or links. A link keeps its text: a heading that
// links elsewhere ("## [Self-serve](https://...)") says "Self-serve", and the permalink anchor many site
// generators append ("[¶](#section)") leaves nothing.
func Headings(text string) iter.Seq2[int, string] {
	return func(yield func(int, string) bool) {
		fenced := false
		for line := range strings.Lines(text) {
			t := strings.TrimSpace(line)
			level := HeadingOutsideFence(t, &fenced)
			if level == 0 {
				continue
			}
			if !yield(level, strings.Trim(strings.TrimSpace(StripLinks(t[level:])), "#*¶ \t")) {
				return
			}
		}
	}
}

// HeadingOutsideFence is HeadingLevel for a caller reading a text line by line (line trimmed of spaces), with
// *fenced tracking fenced code: a "```" or "~~~" line opens or closes it, and inside it a "#" starts a comment,
// not a heading (0).
func HeadingOutsideFence(line string, fenced *bool) int {
	if FenceLine(line) {
		*fenced = !*fenced
		return 0
	}
	if *fenced {
		return 0
	}
	return HeadingLevel(line)
}

// FenceLine reports whether a line (trimmed of spaces) opens or closes a fenced code block: it starts with "```"
// or "~~~".
func FenceLine(line string) bool {
	return strings.HasPrefix(line, "```") || strings.HasPrefix(line, "~~~")
}

// HeadingLevel returns the level of a markdown ATX heading line (up to three spaces, 1-6 "#", then a space, a
// tab or the end of the line), or 0.
func HeadingLevel(line string) int {
	s := strings.TrimLeft(line, " ")
	if len(line)-len(s) > 3 {
		return 0
	}
	n := 0
	for n < len(s) && s[n] == '#' {
		n++
	}
	if n == 0 || n > 6 || (n < len(s) && s[n] != ' ' && s[n] != '\t') {
		return 0
	}
	return n
}

// SearchTextVersion identifies how SearchText composes a chunk's text; vectors computed under another version
// are not reused.
const SearchTextVersion = 5

// SearchText is the text a chunk is searched by, dense and lexical: its page title, its heading trail and its
// text. Ingest embeds exactly this; retrieval indexes it for BM25.
//
// Link targets are left out: a passage's URLs ("http://site/search/?P=MATH%201A") are noise to both searches and
// would drown its words.
func SearchText(title, trail, text string) string {
	text = StripLinks(text)
	trail = strings.TrimPrefix(trail, title+" > ")
	if trail == "" || trail == title {
		return title + "\n" + text
	}
	return title + " > " + trail + "\n" + text
}

// PageSearchText is the text a page is searched by lexically: its title twice (so that a word of the title
// weighs as two of the body) and its markdown without link targets. The in-process BM25 and Qdrant's sparse
// vectors index exactly this.
func PageSearchText(p *Page) string { return p.Title + "\n" + p.Title + "\n" + StripLinks(p.Markdown) }

// PageSearchTexts returns the SearchText of each of page id's chunks, in page order, reading the chunks' texts
// from disk when the index keeps them there.
func PageSearchTexts(ix *Index, id int) ([]string, error) {
	p := &ix.Pages[id]
	texts, err := pageChunkTexts(ix, id)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(texts))
	for k, trail := range HeadingTrails(texts) {
		out[k] = SearchText(p.Title, trail, texts[k])
	}
	return out, nil
}

// ChunkTrails returns the HeadingTrails of every chunk of ix, by chunk id, reading the texts a page at a time
// (from disk when the index keeps them there).
func ChunkTrails(ix *Index) ([]string, error) {
	out := make([]string, len(ix.Chunks))
	for i := range ix.Pages {
		texts, err := pageChunkTexts(ix, i)
		if err != nil {
			return nil, err
		}
		for k, trail := range HeadingTrails(texts) {
			out[ix.Pages[i].Chunks[k]] = trail
		}
	}
	return out, nil
}

// pageChunkTexts returns the texts of page id's chunks, in page order.
func pageChunkTexts(ix *Index, id int) ([]string, error) {
	p := &ix.Pages[id]
	texts := make([]string, len(p.Chunks))
	for k, c := range p.Chunks {
		t, err := ix.ChunkText(c)
		if err != nil {
			return nil, err
		}
		texts[k] = t
	}
	return texts, nil
}

// ChunkSearchTexts are the SearchText of every chunk of ix, in chunk order.
func ChunkSearchTexts(ix *Index) ([]string, error) {
	text := ChunkSearchText(ix)
	out := make([]string, len(ix.Chunks))
	for i := range ix.Chunks {
		var err error
		if out[i], err = text(i); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// ChunkSearchText returns a function that composes the SearchText of chunk i of ix, for a caller that reads
// them one at a time, in chunk order, and need not hold them all (a large site's are hundreds of megabytes): it
// reads a page's texts when asked for its first chunk. It is not safe for concurrent use.
func ChunkSearchText(ix *Index) func(i int) (string, error) {
	page := -1
	var texts []string
	return func(i int) (string, error) {
		c := ix.Chunks[i]
		if c.PageID != page {
			var err error
			if texts, err = PageSearchTexts(ix, c.PageID); err != nil {
				return "", err
			}
			page = c.PageID
		}
		if c.Ord < 0 || c.Ord >= len(texts) || ix.Pages[c.PageID].Chunks[c.Ord] != i {
			return "", fmt.Errorf("index: chunk %d is not at its place %d in page %d", i, c.Ord, c.PageID)
		}
		return texts[c.Ord], nil
	}
}

// PageSearchTextOf is PageSearchText of page id, whose markdown may be on disk.
func PageSearchTextOf(ix *Index, id int) (string, error) {
	md, err := ix.PageMarkdown(id)
	if err != nil {
		return "", err
	}
	p := ix.Pages[id]
	p.Markdown = md
	return PageSearchText(&p), nil
}
