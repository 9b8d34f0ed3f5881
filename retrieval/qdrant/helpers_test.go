package qdrant

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/ragproxy/ragproxy/index"
	"github.com/ragproxy/ragproxy/retrieval"
)

// synthIndex builds an index of n pages with chunksPerPage chunks each and random unit vectors of dim. Page i
// has the distinctive term "topic<i>" in its title, summary and first chunk.
func synthIndex(n, chunksPerPage, dim int, seed uint64) *index.Index {
	rng := rand.New(rand.NewPCG(seed, 1))
	ix := &index.Index{Manifest: index.Manifest{Embedder: "test-embedder", Dimension: dim, Tokenizer: "o200k_base"}}
	for i := range n {
		p := index.Page{
			ID:        i,
			URL:       fmt.Sprintf("https://example.edu/page/%d", i),
			Title:     fmt.Sprintf("Page %d topic%d", i, i),
			Summary:   fmt.Sprintf("Summary of page %d about topic%d.", i, i),
			Markdown:  fmt.Sprintf("# Page %d\n\nAll about topic%d and common words.", i, i),
			Community: i % 3,
		}
		for j := range chunksPerPage {
			text := fmt.Sprintf("chunk %d of page %d with common words", j, i)
			if j == 0 {
				text += fmt.Sprintf(" and topic%d", i)
			}
			ix.Chunks = append(ix.Chunks, index.Chunk{ID: len(ix.Chunks), PageID: i, Ord: j, Text: text, Tokens: 10})
			p.Chunks = append(p.Chunks, len(ix.Chunks)-1)
			ix.ChunkVectors = append(ix.ChunkVectors, randomUnit(rng, dim))
		}
		p.Hash = hashOf(p.Markdown)
		ix.Pages = append(ix.Pages, p)
		ix.SummaryVectors = append(ix.SummaryVectors, randomUnit(rng, dim))
	}
	return stamp(ix)
}

// stamp sets the manifest's version from what the points are made of, as ingest derives it from the content.
func stamp(ix *index.Index) *index.Index {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%d\x00", ix.Manifest.Embedder, ix.Manifest.Dimension)
	for _, p := range ix.Pages {
		fmt.Fprintf(h, "%d\x00%s\x00%s\x00%s\x00%s\x00%s\x00%d\x00%d\x00", p.ID, p.URL, p.Hash, p.Title, p.Summary, p.Section, p.Community, len(p.Chunks))
	}
	ix.Manifest.Version = hex.EncodeToString(h.Sum(nil))[:16]
	return ix
}

// changePage returns a copy of ix whose page id has more text (so a new hash and fingerprint), stamped.
func changePage(ix *index.Index, id int, more string) *index.Index {
	cp := *ix
	cp.Pages = slices.Clone(ix.Pages)
	cp.Pages[id].Markdown += more
	cp.Pages[id].Hash = hashOf(cp.Pages[id].Markdown)
	return stamp(&cp)
}

// renumber rebuilds page and chunk ids as positions after pages were added, removed or reordered.
func renumber(ix *index.Index) *index.Index {
	out := &index.Index{Manifest: ix.Manifest}
	for _, p := range ix.Pages {
		np := p
		np.ID = len(out.Pages)
		np.Chunks = nil
		for _, cid := range p.Chunks {
			c := ix.Chunks[cid]
			c.ID, c.PageID = len(out.Chunks), np.ID
			out.Chunks = append(out.Chunks, c)
			out.ChunkVectors = append(out.ChunkVectors, ix.ChunkVectors[cid])
			np.Chunks = append(np.Chunks, c.ID)
		}
		out.Pages = append(out.Pages, np)
		out.SummaryVectors = append(out.SummaryVectors, ix.SummaryVectors[p.ID])
	}
	return stamp(out)
}

// withoutPage returns ix without page id, renumbered.
func withoutPage(ix *index.Index, id int) *index.Index {
	cp := *ix
	cp.Pages = nil
	for _, p := range ix.Pages {
		if p.ID != id {
			cp.Pages = append(cp.Pages, p)
		}
	}
	return renumber(&cp)
}

func randomUnit(rng *rand.Rand, dim int) []float32 {
	v := make([]float32, dim)
	var norm float64
	for i := range v {
		x := rng.NormFloat64()
		v[i] = float32(x)
		norm += x * x
	}
	norm = math.Sqrt(norm)
	for i := range v {
		v[i] = float32(float64(v[i]) / norm)
	}
	return v
}

func hashOf(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

// searchSummaries is one query of s.SearchSummaries.
func searchSummaries(ctx context.Context, s retrieval.VectorStore, q retrieval.VectorQuery, k int) ([]retrieval.VectorHit, error) {
	res, err := s.SearchSummaries(ctx, []retrieval.VectorQuery{q}, k)
	if err != nil {
		return nil, err
	}
	return res[0], nil
}

// searchChunks is one query of s.SearchChunks.
func searchChunks(ctx context.Context, s retrieval.VectorStore, q retrieval.VectorQuery, pageIDs []int, k int) ([]retrieval.VectorHit, error) {
	res, err := s.SearchChunks(ctx, []retrieval.VectorQuery{q}, pageIDs, k)
	if err != nil {
		return nil, err
	}
	return res[0], nil
}

// SearchSummariesOne and SearchChunksOne give the external tests the one-query searches.
var (
	SearchSummariesOne = searchSummaries
	SearchChunksOne    = searchChunks
)
