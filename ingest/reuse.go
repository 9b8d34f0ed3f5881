package ingest

import (
	"bytes"

	"github.com/ragproxy/ragproxy/embedding"
	"github.com/ragproxy/ragproxy/firsterr"
	"github.com/ragproxy/ragproxy/index"
	"github.com/ragproxy/ragproxy/ingest/chunk"
	"github.com/ragproxy/ragproxy/ingest/crawl"
)

// reuse answers what the previous index already computed. A nil *reuse (no previous index) reuses nothing.
type reuse struct {
	ix *index.Index
	// content says the previous pages were cleaned and chunked under the current settings and tokenizer, so
	// an unchanged body may keep its markdown and chunks.
	content bool
	byURL   map[string]*index.Page
	byHash  map[string]*index.Page
	// copies are the records of the PDFs the previous ingest left out as copies, by URL (see dropCopies).
	copies map[string]copyRecord
}

func newReuse(ix *index.Index, settings []byte, tokenizer string) *reuse {
	if ix == nil {
		return nil
	}
	r := &reuse{ix: ix, content: bytes.Equal(ix.Manifest.Settings, settings) && ix.Manifest.Tokenizer == tokenizer,
		byURL:  make(map[string]*index.Page, len(ix.Pages)),
		byHash: make(map[string]*index.Page, len(ix.Pages))}
	if r.content {
		// A record that cannot be read costs the PDFs' parsing, nothing else: they are judged again.
		r.copies, _ = readCopies(ix.Dir())
	}
	for i := range ix.Pages {
		p := &ix.Pages[i]
		r.byURL[p.URL] = p
		if _, ok := r.byHash[p.Hash]; !ok {
			r.byHash[p.Hash] = p
		}
	}
	return r
}

// copyOf is the record of the PDF at url when the previous ingest left it out as a copy.
func (r *reuse) copyOf(url string) (copyRecord, bool) {
	if r == nil {
		return copyRecord{}, false
	}
	c, ok := r.copies[url]
	return c, ok
}

// copyRecords are the previous ingest's records of copies (see dropCopies).
func (r *reuse) copyRecords() []copyRecord {
	if r == nil {
		return nil
	}
	out := make([]copyRecord, 0, len(r.copies))
	for _, c := range r.copies {
		out = append(out, c)
	}
	return out
}

// page returns the previous page at url when its markdown and chunks may be reused.
func (r *reuse) page(url string) *index.Page {
	if r == nil || !r.content {
		return nil
	}
	return r.byURL[url]
}

// revisits is what the previous crawl learnt, for the crawler's conditional requests (crawl.Config.Previous):
// each page of the previous index under the URL that answered with it, with its validators and its links as
// crawled, and the meta refreshes passed on the way to them. It gives only what a 304 can be rebuilt from: pages
// whose markdown and chunks may be reused. Pages the previous crawl dropped (duplicates, unreadable, outside the
// sections) have no markdown in the index, so they are fetched in full.
func (r *reuse) revisits() map[string]crawl.Revisit {
	if r == nil || !r.content || r.ix.Crawl == nil {
		return nil
	}
	c := r.ix.Crawl
	out := make(map[string]crawl.Revisit, len(r.ix.Pages)+len(c.Refreshes))
	for i, p := range r.ix.Pages {
		if p.Fetched.IsZero() {
			continue
		}
		var links []string
		if len(c.Links[i]) > 0 {
			links = make([]string, len(c.Links[i]))
			for j, l := range c.Links[i] {
				links[j] = c.URLs[l]
			}
		}
		at := p.URL
		if p.Source != "" {
			at = p.Source
		}
		out[at] = crawl.Revisit{Page: p.URL, ETag: p.ETag, LastModified: p.LastModified, Fetched: p.Fetched,
			Links: links}
	}
	for _, f := range c.Refreshes {
		if _, ok := out[f.URL]; !ok {
			out[f.URL] = crawl.Revisit{Refresh: f.Target, ETag: f.ETag, LastModified: f.LastModified,
				Fetched: f.Fetched}
		}
	}
	return out
}

// markdown returns the previous page's markdown, read from the previous index (whose texts stay on disk, so
// that a re-ingest holds only the texts it keeps).
func (r *reuse) markdown(p *index.Page) (string, error) { return r.ix.PageMarkdown(p.ID) }

// markdownRef returns where the previous page's markdown is on disk, and false when the previous index holds its
// texts in memory.
func (r *reuse) markdownRef(p *index.Page) (index.TextRef, bool) { return r.ix.PageTextRef(p.ID) }

// chunkRefs returns the previous page's chunks without their texts, and where those are on disk; false when the
// previous index holds its texts in memory.
func (r *reuse) chunkRefs(p *index.Page) ([]chunk.Chunk, []index.TextRef, bool) {
	cs := make([]chunk.Chunk, len(p.Chunks))
	refs := make([]index.TextRef, len(p.Chunks))
	for i, id := range p.Chunks {
		ref, ok := r.ix.ChunkTextRef(id)
		if !ok {
			return nil, nil, false
		}
		cs[i], refs[i] = chunk.Chunk{Tokens: r.ix.Chunks[id].Tokens}, ref
	}
	return cs, refs, true
}

// chunks returns the previous page's chunks.
func (r *reuse) chunks(p *index.Page) ([]chunk.Chunk, error) {
	out := make([]chunk.Chunk, len(p.Chunks))
	for i, id := range p.Chunks {
		text, err := r.ix.ChunkText(id)
		if err != nil {
			return nil, err
		}
		out[i] = chunk.Chunk{Text: text, Tokens: r.ix.Chunks[id].Tokens}
	}
	return out, nil
}

// close releases the previous index's files.
func (r *reuse) close() {
	if r != nil {
		r.ix.Close()
	}
}

// llmSummary returns the previous summary of content with this hash when model wrote it (not when it is the
// extractive line kept after that model's call failed).
func (r *reuse) llmSummary(hash, model string) (string, bool) {
	if r == nil {
		return "", false
	}
	if p, ok := r.byHash[hash]; ok && p.SummaryModel == model {
		return p.Summary, true
	}
	return "", false
}

// extractiveSummaries returns the previous extractive summaries when they would come out the same: the same
// pages (URL, title and content) in the same order under the same settings. Key terms weigh each page against
// the whole corpus, so any change anywhere recomputes them all.
func (r *reuse) extractiveSummaries(ix *index.Index, settings []byte) ([]string, bool) {
	if r == nil || r.ix.Manifest.Summarizer != "extractive" || !bytes.Equal(r.ix.Manifest.Settings, settings) ||
		len(r.ix.Pages) != len(ix.Pages) {
		return nil, false
	}
	out := make([]string, len(ix.Pages))
	for i, p := range ix.Pages {
		old := r.ix.Pages[i]
		if old.URL != p.URL || old.Hash != p.Hash || old.Title != p.Title {
			return nil, false
		}
		out[i] = old.Summary
	}
	return out, true
}

// localState returns the previous local embedder state when it was the same local model.
func (r *reuse) localState(name string) ([]byte, bool) {
	if r == nil || r.ix.Manifest.Embedder != name || len(r.ix.EmbedderState) == 0 {
		return nil, false
	}
	return r.ix.EmbedderState, true
}

func (r *reuse) sameEmbedder(e embedding.Embedder, state []byte) bool {
	return r != nil && r.ix.Manifest.Embedder == e.Name() && r.ix.Manifest.Dimension == e.Dimension() &&
		r.ix.Manifest.SearchText == index.SearchTextVersion && bytes.Equal(r.ix.EmbedderState, state)
}

// summaryVectors maps each previous summary text to its vector. Call it only under the same embedder.
func (r *reuse) summaryVectors() map[string][]float32 {
	m := make(map[string][]float32, len(r.ix.Pages))
	for i, p := range r.ix.Pages {
		m[p.Title+"\n"+p.Summary] = r.ix.SummaryVectors[i]
	}
	return m
}

// chunkVectors maps the search text of each previous chunk that the new index does not take over by position
// (taken[i] is a previous chunk id or -1) to its vector. Call it only under the same embedder.
func (r *reuse) chunkVectors(taken []int) map[string][]float32 {
	used := make([]bool, len(r.ix.Chunks))
	for _, id := range taken {
		if id >= 0 {
			used[id] = true
		}
	}
	need := make([]bool, len(r.ix.Pages))
	for i, c := range r.ix.Chunks {
		if !used[i] {
			need[c.PageID] = true
		}
	}
	texts, err := searchTexts(r.ix, need)
	if err != nil {
		return nil // the previous texts are unreadable: embed them again
	}
	m := make(map[string][]float32)
	for i, c := range r.ix.Chunks {
		if !used[i] && need[c.PageID] {
			m[texts[i]] = r.ix.ChunkVectors[i]
		}
	}
	return m
}

// searchTexts returns the search text of each chunk of the pages in need (all pages when need is nil); other
// entries are empty.
func searchTexts(ix *index.Index, need []bool) ([]string, error) {
	out := make([]string, len(ix.Chunks))
	var failed firsterr.Holder
	parallel(len(ix.Pages), func(i int) {
		if need != nil && !need[i] {
			return
		}
		texts, err := index.PageSearchTexts(ix, i)
		if err != nil {
			failed.Keep(err)
			return
		}
		for k, c := range ix.Pages[i].Chunks {
			out[c] = texts[k]
		}
	})
	return out, failed.Err()
}

// removed counts previous pages that the new index no longer has.
func (r *reuse) removed(ix *index.Index) int {
	if r == nil {
		return 0
	}
	now := make(map[string]bool, len(ix.Pages))
	for _, p := range ix.Pages {
		now[p.URL] = true
	}
	n := 0
	for u := range r.byURL {
		if !now[u] {
			n++
		}
	}
	return n
}
