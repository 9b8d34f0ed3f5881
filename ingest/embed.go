package ingest

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/ragproxy/ragproxy/embedding"
	"github.com/ragproxy/ragproxy/index"
	"github.com/ragproxy/ragproxy/ingest/ledger"
)

// embed embeds summaries and chunks, reusing the previous vectors of identical texts under the same embedder. A
// first build with the local embedder fits its IDF table and embeds in one pass over the texts it embeds.
func (r *run) embed(ctx context.Context, ix *index.Index) error {
	sums := make([]string, len(ix.Pages))
	for i, p := range ix.Pages {
		sums[i] = p.Title + "\n" + p.Summary
	}
	bar := r.progress.stage("embedded", len(ix.Pages)+len(ix.Chunks))
	defer bar.done()
	r.cfg.Local.Languages = ix.LanguageTags() // the local embedder reads each text in its language among these
	fit, err := r.chooseEmbedder()
	if err != nil {
		return err
	}
	if fit {
		return r.fitAndEmbed(ctx, ix, sums, bar)
	}
	r.paid.meter(r.embedder)
	same := r.prev.sameEmbedder(r.embedder, r.embState)
	var oldSums map[string][]float32
	if same {
		oldSums = r.prev.summaryVectors()
	}
	ix.SummaryVectors = make([][]float32, len(sums))
	err = r.embedReusing(ctx, len(sums), func(i int) (string, error) { return sums[i], nil }, oldSums, bar,
		func(i int, v []float32) error {
			ix.SummaryVectors[i] = v
			return nil
		})
	if err != nil {
		return fmt.Errorf("ingest: embed summaries: %w", err)
	}
	return r.embedChunks(ctx, ix, same, bar)
}

// fitAndEmbed fits the local embedder on the summaries (sums, one a page) and the chunks' search texts and embeds
// them in the same pass, and sets r.embedder to it.
func (r *run) fitAndEmbed(ctx context.Context, ix *index.Index, sums []string, bar *bar) error {
	// The chunks' search texts are composed when the fit asks for them, from the texts on disk: all at
	// once they would be the largest thing ingest holds.
	trails, err := index.ChunkTrails(ix)
	if err != nil {
		return fmt.Errorf("ingest: %w", err)
	}
	text := func(i int) (string, error) {
		if i < len(sums) {
			return sums[i], nil
		}
		c := i - len(sums)
		t, err := ix.ChunkText(c)
		return index.SearchText(ix.Pages[ix.Chunks[c].PageID].Title, trails[c], t), err
	}
	// The chunk vectors go to a file as they are computed and the index reads them from there, mapped: a
	// large site's are a third of what ingest would otherwise hold at its peak.
	all := len(sums) + len(ix.Chunks)
	dim := embedding.NewLocal(r.cfg.Local).Dimension()
	vf, err := index.NewVectorFile(filepath.Join(r.spillDir, "chunks.f32"), len(ix.Chunks), dim)
	if err != nil {
		return fmt.Errorf("ingest: %w", err)
	}
	defer vf.Close()
	ix.SummaryVectors = make([][]float32, len(sums))
	backing := make([]float32, len(sums)*dim)
	l, err := embedding.FitEmbedInto(ctx, all, text, r.cfg.Local, func(i int, v []float32) error {
		if i < len(sums) {
			ix.SummaryVectors[i] = backing[i*dim : (i+1)*dim]
			copy(ix.SummaryVectors[i], v)
			return nil
		}
		return vf.Put(i-len(sums), v)
	})
	if err == nil {
		err = vf.SealChunks(ix)
	}
	if err != nil {
		return fmt.Errorf("ingest: %w", err)
	}
	if r.embState, err = l.MarshalBinary(); err != nil {
		return fmt.Errorf("ingest: local embedder: %w", err)
	}
	r.embedder = l
	r.report.Embedded += all
	bar.add(all)
	return nil
}

// embedChunks gives every chunk its vector, once the summaries have theirs: the previous vector of the chunk it
// repeats when the embedder is the same one (same), else that of a previous chunk with the same search text, else
// a new one.
func (r *run) embedChunks(ctx context.Context, ix *index.Index, same bool, bar *bar) error {
	// The chunk vectors go to a vector file as they come, as with the local embedder: an upstream model's are
	// larger still (1536 values a chunk). Chunks of unchanged pages take their previous vectors by position;
	// the others are looked up by search text among the previous index's other chunks, then embedded.
	var todo []int
	for i := range ix.Chunks {
		if !same || r.fromChunk[i] < 0 {
			todo = append(todo, i)
		}
	}
	bar.add(len(ix.Chunks) - len(todo))
	if len(todo) == 0 {
		// Every chunk as before (an unchanged site, say): the rows of the previous version's mapped file, which
		// a write would copy and an unchanged version never touches.
		ix.ChunkVectors = make([][]float32, len(ix.Chunks))
		for i := range ix.Chunks {
			ix.ChunkVectors[i] = r.prev.ix.ChunkVectors[r.fromChunk[i]]
		}
		return nil
	}
	dim := len(ix.SummaryVectors[0]) // ErrNoPages: an index has a page
	vf, err := index.NewVectorFile(filepath.Join(r.spillDir, "chunks.f32"), len(ix.Chunks), dim)
	if err != nil {
		return fmt.Errorf("ingest: %w", err)
	}
	defer vf.Close()
	var oldChunks map[string][]float32
	if same {
		oldChunks = r.prev.chunkVectors(r.fromChunk)
		for i := range ix.Chunks {
			if r.fromChunk[i] >= 0 {
				if err := vf.Put(i, r.prev.ix.ChunkVectors[r.fromChunk[i]]); err != nil {
					return fmt.Errorf("ingest: %w", err)
				}
			}
		}
	}
	text := index.ChunkSearchText(ix)
	err = r.embedReusing(ctx, len(todo), func(j int) (string, error) { return text(todo[j]) }, oldChunks, bar,
		func(j int, v []float32) error { return vf.Put(todo[j], v) })
	if err != nil {
		return fmt.Errorf("ingest: embed chunks: %w", err)
	}
	if err := vf.SealChunks(ix); err != nil {
		return fmt.Errorf("ingest: %w", err)
	}
	return nil
}

// chooseEmbedder sets r.embedder: the configured one, or the local embedder with the previous index's IDF table
// (so unchanged texts keep their vectors; --full refits). It reports fit when a local embedder must be fitted
// on this corpus first, which embed does in the same pass as embedding.
func (r *run) chooseEmbedder() (fit bool, err error) {
	if r.cfg.Embedder != nil {
		r.embedder = r.cfg.Embedder
		return false, nil
	}
	fresh := embedding.NewLocal(r.cfg.Local)
	if st, ok := r.prev.localState(fresh.Name()); ok {
		if err := fresh.UnmarshalBinary(st); err == nil {
			r.embedder, r.embState = fresh, st
			return false, nil
		}
	}
	return true, nil
}

// embedReusing embeds the n texts that text returns, in batches, taking vectors from old where the same text was
// embedded before, else from the ledger where an earlier run paid for it, and hands vector i to put: the reused
// ones as they are found, then the others as their requests answer. Each new vector goes to the ledger with its
// request, so that a run that fails later keeps it. It reads each text it embeds twice (to look it up, then in
// its batch), so that it holds only a batch of them.
func (r *run) embedReusing(ctx context.Context, n int, text func(i int) (string, error), old map[string][]float32,
	bar *bar, put func(i int, v []float32) error) error {
	keep := r.cfg.Embedder != nil && r.paid.ledger != nil // the local embedder costs nothing
	dim := r.embedder.Dimension()
	var todo []int
	for i := range n {
		t, err := text(i)
		if err != nil {
			return err
		}
		if v, ok := old[t]; ok {
			if err := put(i, v); err != nil {
				return err
			}
			bar.add(1)
			continue
		}
		if keep {
			if v, ok := r.paid.vector(vectorKey(r.embedder, t), dim); ok {
				if err := put(i, v); err != nil {
					return err
				}
				r.report.KeptVectors++
				bar.add(1)
				continue
			}
		}
		todo = append(todo, i)
	}
	// An incremental embedder gets larger slices: it cuts its own requests and hands each back as it answers.
	batch := 512
	inc, incremental := r.embedder.(embedding.Incremental)
	if incremental {
		batch = 8192
	}
	for lo := 0; lo < len(todo); lo += batch {
		hi := min(lo+batch, len(todo))
		in := make([]string, hi-lo)
		for j, i := range todo[lo:hi] {
			var err error
			if in[j], err = text(i); err != nil {
				return err
			}
		}
		if incremental {
			err := inc.EmbedEach(ctx, in, func(pos []int, vecs [][]float32) error {
				keys := make([]ledger.Key, len(pos))
				for j, p := range pos {
					if err := put(todo[lo+p], vecs[j]); err != nil {
						return err
					}
					keys[j] = vectorKey(r.embedder, in[p])
				}
				bar.add(len(pos))
				r.report.Embedded += len(pos)
				if keep {
					return r.paid.putVectors(keys, vecs)
				}
				return nil
			})
			if err != nil {
				return err
			}
			continue
		}
		vecs, err := r.embedder.Embed(ctx, in)
		if err != nil {
			return err
		}
		if len(vecs) != len(in) {
			return fmt.Errorf("embedder returned %d vectors for %d texts", len(vecs), len(in))
		}
		for j, i := range todo[lo:hi] {
			if err := put(i, vecs[j]); err != nil {
				return err
			}
		}
		bar.add(len(in))
		r.report.Embedded += len(in)
	}
	return nil
}
