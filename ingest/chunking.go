package ingest

import (
	"context"
	"fmt"
	"slices"

	"github.com/ragproxy/ragproxy/firsterr"
	"github.com/ragproxy/ragproxy/index"
	"github.com/ragproxy/ragproxy/ingest/boilerplate"
	"github.com/ragproxy/ragproxy/ingest/chunk"
)

// chunk splits every page, reusing the previous chunks of unchanged pages.
func (r *run) chunk(ctx context.Context, ix *index.Index, docs []*doc) error {
	bar := r.progress.stage("chunked", len(ix.Pages))
	defer bar.done()
	per := make([][]chunk.Chunk, len(ix.Pages))
	refs := make([][]index.TextRef, len(ix.Pages)) // the chunks' texts in the spill
	olds := make([]*index.Page, len(ix.Pages))
	var failed firsterr.Holder
	fail := failed.Keep
	// The site's template blocks (boilerplate) are left out of every page's chunks; an unchanged page keeps its
	// previous chunks only if the previous version left out the same blocks.
	template, err := r.template(ix)
	if err != nil {
		return err
	}
	sameTemplate := r.prev != nil && r.prev.ix.Manifest.Boilerplate == template.Key()
	// Read the chunks of unchanged pages (from disk: side by side), then split the others, with the tokenizer
	// loaded only if there are any.
	parallel(len(ix.Pages), func(i int) {
		p := &ix.Pages[i]
		if old := r.prev.page(p.URL); old != nil && old.Hash == p.Hash && sameTemplate {
			if cs, rs, ok := r.prev.chunkRefs(old); ok { // the texts stay where the previous version has them
				per[i], refs[i], olds[i] = cs, rs, old
				return
			}
			cs, err := r.prev.chunks(old)
			if err == nil {
				if refs[i], err = r.spillChunks(cs); err != nil {
					fail(err)
					return
				}
				per[i], olds[i] = cs, old
				return
			}
			r.cfg.Logger.Warn("previous chunks unreadable; splitting the page again", "url", p.URL, "err", err)
		}
	})
	if slices.Contains(olds, nil) {
		tok, err := r.tokLoad.get()
		if err != nil {
			return fmt.Errorf("ingest: %w", err)
		}
		r.tok = tok
	}
	if err := failed.Err(); err != nil {
		return fmt.Errorf("ingest: chunk: %w", err)
	}
	parallel(len(ix.Pages), func(i int) {
		defer bar.add(1)
		if ctx.Err() != nil || olds[i] != nil {
			return
		}
		md, err := r.spill.Read(r.pageRefs[i])
		if err != nil {
			fail(err)
			return
		}
		per[i] = chunk.Split(r.tok, template.Strip(md), r.cfg.Chunk)
		if refs[i], err = r.spillChunks(per[i]); err != nil {
			fail(err)
		}
	})
	if err := failed.Err(); err != nil {
		return fmt.Errorf("ingest: chunk: %w", err)
	}
	r.fromChunk, r.chunkRefs = r.fromChunk[:0], r.chunkRefs[:0]
	for i := range ix.Pages {
		p := &ix.Pages[i]
		old := olds[i]
		if old != nil {
			r.report.Reused++
		}
		for ord, c := range per[i] {
			id := len(ix.Chunks)
			ix.Chunks = append(ix.Chunks, index.Chunk{ID: id, PageID: i, Ord: ord, Tokens: c.Tokens})
			r.chunkRefs = append(r.chunkRefs, refs[i][ord])
			p.Chunks = append(p.Chunks, id)
			// A chunk of an unchanged page under the same title has the same search text as before.
			from := -1
			if old != nil && old.Title == p.Title {
				from = old.Chunks[ord]
			}
			r.fromChunk = append(r.fromChunk, from)
		}
	}
	return nil
}

// template finds the site's boilerplate among the pages' markdown (package boilerplate), reading the pages side
// by side and keeping only their edge blocks' identities, and records its key for the manifest.
func (r *run) template(ix *index.Index) (*boilerplate.Set, error) {
	edges := make([][]uint64, len(ix.Pages))
	var failed firsterr.Holder
	parallel(len(ix.Pages), func(i int) {
		md, err := r.spill.Read(r.pageRefs[i])
		if err != nil {
			failed.Keep(err)
			return
		}
		edges[i] = boilerplate.Edges(md, r.cfg.Boilerplate)
	})
	if err := failed.Err(); err != nil {
		return nil, fmt.Errorf("ingest: template: %w", err)
	}
	set := boilerplate.Build(edges, r.cfg.Boilerplate)
	if set.Len() > 0 {
		r.cfg.Logger.Info("site template left out of the chunks", "blocks", set.Len())
	}
	r.boilerplate = set.Key()
	return set, nil
}

// spillChunks moves the chunks' texts to the spill as they are made (they are parts of their page's markdown,
// which they would otherwise keep in memory) and returns where they are.
func (r *run) spillChunks(cs []chunk.Chunk) ([]index.TextRef, error) {
	refs := make([]index.TextRef, len(cs))
	for k := range cs {
		ref, err := r.spill.Add(cs[k].Text)
		if err != nil {
			return nil, err
		}
		refs[k], cs[k].Text = ref, ""
	}
	return refs, nil
}
