package ingest

import (
	"bytes"

	"github.com/ragproxy/ragproxy/embed"
	"github.com/ragproxy/ragproxy/index"
	"github.com/ragproxy/ragproxy/ingest/chunk"
)

// reuse answers what the previous index already computed. A nil *reuse (no previous index) reuses nothing.
type reuse struct {
	ix    *index.Index
	byURL map[string]*index.Page
}

func newReuse(ix *index.Index) *reuse {
	if ix == nil {
		return nil
	}
	r := &reuse{ix: ix, byURL: make(map[string]*index.Page, len(ix.Pages))}
	for i := range ix.Pages {
		r.byURL[ix.Pages[i].URL] = &ix.Pages[i]
	}
	return r
}

func (r *reuse) page(url string) *index.Page {
	if r == nil {
		return nil
	}
	return r.byURL[url]
}

func (r *reuse) chunks(p *index.Page) []chunk.Chunk {
	out := make([]chunk.Chunk, len(p.Chunks))
	for i, id := range p.Chunks {
		c := r.ix.Chunks[id]
		out[i] = chunk.Chunk{Text: c.Text, Tokens: c.Tokens}
	}
	return out
}

// llmSummary returns the previous summary of content with this hash when the same model wrote it.
func (r *reuse) llmSummary(hash, model string) (string, bool) {
	if r == nil || r.ix.Manifest.Summarizer == "extractive" {
		return "", false
	}
	if model == "" {
		model = "gpt-4o-mini"
	}
	if r.ix.Manifest.Summarizer != model {
		return "", false
	}
	for _, p := range r.ix.Pages {
		if p.Hash == hash {
			return p.Summary, true
		}
	}
	return "", false
}

// localState returns the previous local embedder state when it was the same local model.
func (r *reuse) localState(name string) ([]byte, bool) {
	if r == nil || r.ix.Manifest.Embedder != name || len(r.ix.EmbedderState) == 0 {
		return nil, false
	}
	return r.ix.EmbedderState, true
}

func (r *reuse) sameEmbedder(e embed.Embedder, state []byte) bool {
	return r != nil && r.ix.Manifest.Embedder == e.Name() && r.ix.Manifest.Dimension == e.Dimension() &&
		r.ix.Manifest.SearchText == index.SearchTextVersion && bytes.Equal(r.ix.EmbedderState, state)
}

func (r *reuse) summaryVectors(e embed.Embedder, state []byte) map[string][]float32 {
	if !r.sameEmbedder(e, state) {
		return nil
	}
	m := make(map[string][]float32, len(r.ix.Pages))
	for i, p := range r.ix.Pages {
		m[p.Title+"\n"+p.Summary] = r.ix.SummaryVectors[i]
	}
	return m
}

func (r *reuse) chunkVectors(e embed.Embedder, state []byte) map[string][]float32 {
	if !r.sameEmbedder(e, state) {
		return nil
	}
	m := make(map[string][]float32, len(r.ix.Chunks))
	trails := index.ChunkContexts(r.ix)
	for i, c := range r.ix.Chunks {
		m[index.SearchText(r.ix.Pages[c.PageID].Title, trails[i], c.Text)] = r.ix.ChunkVectors[i]
	}
	return m
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
