package index

import (
	"fmt"

	"github.com/ragproxy/ragproxy/markdown"

	"strings"
)

// SearchTextVersion identifies how SearchText composes a chunk's text; vectors computed under another version
// are not reused.
const SearchTextVersion = 5

// SearchText is the text a chunk is searched by, dense and lexical: its page title, its heading trail and its
// text. Ingest embeds exactly this; retrieval indexes it for BM25.
//
// Link targets are left out: a passage's URLs ("http://site/search/?P=MATH%201A") are noise to both searches and
// would drown its words.
func SearchText(title, trail, text string) string {
	text = markdown.StripLinks(text)
	trail = strings.TrimPrefix(trail, title+" > ")
	if trail == "" || trail == title {
		return title + "\n" + text
	}
	return title + " > " + trail + "\n" + text
}

// PageSearchText is the text a page is searched by lexically: its title twice (so that a word of the title
// weighs as two of the body) and its markdown without link targets. The in-process BM25 and Qdrant's sparse
// vectors index exactly this.
func PageSearchText(p *Page) string {
	return p.Title + "\n" + p.Title + "\n" + markdown.StripLinks(p.Markdown)
}

// PageSearchTexts returns the SearchText of each of page id's chunks, in page order, reading the chunks' texts
// from disk when the index keeps them there.
func PageSearchTexts(ix *Index, id int) ([]string, error) {
	p := &ix.Pages[id]
	texts, err := pageChunkTexts(ix, id)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(texts))
	for k, trail := range markdown.HeadingTrails(texts) {
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
		for k, trail := range markdown.HeadingTrails(texts) {
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
