// Package embedding turns texts into unit-length vectors for dense retrieval. Local is a built-in hashing
// embedder that needs no network and no model weights; OpenAI calls any OpenAI-compatible /v1/embeddings
// endpoint. Both are safe for concurrent use once built.
package embedding

import (
	"context"
	"math"
)

// Embedder turns texts into vectors. Each returned row has Dimension() elements and unit L2 length (a text with
// no content may embed as the zero vector), so the dot product of two rows is their cosine similarity.
type Embedder interface {
	// Embed returns one vector per text, in order.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
	// Dimension is the length of every vector Embed returns (0 while an OpenAI embedder has not yet learned it).
	Dimension() int
	// Name identifies the model and its settings; vectors are comparable only between equal names.
	Name() string
}

// normalize scales v to unit L2 length in place; the zero vector is left as is.
func normalize(v []float32) {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	if s == 0 {
		return
	}
	inv := float32(1 / math.Sqrt(s))
	for i := range v {
		v[i] *= inv
	}
}
