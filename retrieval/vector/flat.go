package vector

import "fmt"

// Flat is an exact index: a search computes the dot product of the query with every vector (cosine similarity,
// since vectors are unit length) and keeps the best k in a bounded heap. It needs no build time and is exact;
// its search time grows linearly with the collection (see the package benchmarks).
type Flat struct {
	dim  int
	n    int
	data []float32 // n*dim, row-major
}

var _ Index = (*Flat)(nil)

// NewFlat copies rows into a Flat index. Rows must all have the same length and should be unit length.
func NewFlat(rows [][]float32) (*Flat, error) {
	data, dim, err := pack(rows)
	if err != nil {
		return nil, err
	}
	return &Flat{dim: dim, n: len(rows), data: data}, nil
}

// Len returns the number of vectors.
func (f *Flat) Len() int { return f.n }

// Dim returns the vector length (0 for an empty index).
func (f *Flat) Dim() int { return f.dim }

// Vector returns row id (shared with the index: do not modify).
func (f *Flat) Vector(id int) []float32 { return f.data[id*f.dim : (id+1)*f.dim : (id+1)*f.dim] }

// Search implements Index. A query of the wrong length returns no hits.
func (f *Flat) Search(q []float32, k int, filter func(id int) bool) []Hit {
	if k <= 0 || len(q) != f.dim || f.n == 0 {
		return nil
	}
	top := newTopK(min(k, f.n))
	for i := range f.n {
		if filter != nil && !filter(i) {
			continue
		}
		top.push(Hit{ID: i, Score: Dot(q, f.data[i*f.dim:(i+1)*f.dim])})
	}
	return top.sorted()
}

// SearchIDs is Search restricted to the vectors in ids (duplicates and out-of-range ids are ignored), for when
// the caller already knows the candidates, such as the chunks of a few pages; it costs len(ids) dot products.
func (f *Flat) SearchIDs(q []float32, k int, ids []int) []Hit {
	if k <= 0 || len(q) != f.dim {
		return nil
	}
	top := newTopK(min(k, len(ids)))
	seen := make(map[int]struct{}, len(ids))
	for _, i := range ids {
		if i < 0 || i >= f.n {
			continue
		}
		if _, dup := seen[i]; dup {
			continue
		}
		seen[i] = struct{}{}
		top.push(Hit{ID: i, Score: Dot(q, f.data[i*f.dim:(i+1)*f.dim])})
	}
	return top.sorted()
}

func (f *Flat) String() string { return fmt.Sprintf("vector.Flat{n: %d, dim: %d}", f.n, f.dim) }

// SearchMulti is Search for several queries in one pass over the vectors: each row is read once for all
// queries, which matters when the index is larger than the CPU caches (searching is bound by memory bandwidth).
func (f *Flat) SearchMulti(qs [][]float32, k int) [][]Hit { return f.SearchMultiFilter(qs, k, nil) }

// SearchMultiFilter is SearchMulti over the vectors for which filter returns true (all when it is nil). The
// filter runs before any dot product, so a rejected vector costs nothing and the k hits are the exact best of
// the accepted ones.
func (f *Flat) SearchMultiFilter(qs [][]float32, k int, filter func(id int) bool) [][]Hit {
	out := make([][]Hit, len(qs))
	if k <= 0 || len(qs) == 0 {
		return out
	}
	tops := make([]*topK, len(qs))
	for i, q := range qs {
		if len(q) != f.dim {
			return out
		}
		tops[i] = newTopK(min(k, f.n))
	}
	for i := 0; i < f.n; i++ {
		if filter != nil && !filter(i) {
			continue
		}
		row := f.data[i*f.dim : (i+1)*f.dim]
		for j, q := range qs {
			tops[j].push(Hit{ID: i, Score: Dot(q, row)})
		}
	}
	for j := range out {
		out[j] = tops[j].sorted()
	}
	return out
}
