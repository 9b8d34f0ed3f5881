// Package vector finds the nearest unit vectors to a query by cosine similarity: Flat scans every vector
// exactly, and IVF scans exactly only the clusters (lists) nearest to the query, with a build cheap enough for
// ingest and a compact binary form. Both satisfy Index.
//
// Indexes are immutable once built and safe for concurrent searches.
package vector

import (
	"errors"
	"fmt"
	"sort"

	"github.com/viterin/vek/vek32"
)

// Hit is one search result: a vector's position in the slice the index was built from, and its cosine
// similarity with the query.
type Hit struct {
	ID    int
	Score float32
}

// Index is a nearest-neighbour index over unit vectors.
type Index interface {
	// Search returns up to k vectors most similar to q, best first (ties by ID). When filter is not nil, only
	// vectors for which it returns true are returned.
	Search(q []float32, k int, filter func(id int) bool) []Hit
	// Len returns the number of vectors.
	Len() int
}

// ErrDimension is returned when vectors or a query do not all have the same length.
var ErrDimension = errors.New("vector dimensions differ")

// pack lays rows out as one row-major slice: the array they are parts of when they are consecutive in one, else a
// copy.
func pack(rows [][]float32) (data []float32, dim int, err error) {
	if len(rows) == 0 {
		return nil, 0, nil
	}
	dim = len(rows[0])
	if dim == 0 {
		return nil, 0, fmt.Errorf("vector: row 0 is empty: %w", ErrDimension)
	}
	// Rows that are consecutive parts of one array, reachable from the first row's capacity (index.Load reads
	// them so), are used as they are rather than holding every vector twice.
	all := rows[0][:cap(rows[0])]
	contiguous := len(all) >= len(rows)*dim
	for i, r := range rows {
		if len(r) != dim {
			return nil, 0, fmt.Errorf("vector: row %d has %d elements, row 0 has %d: %w", i, len(r), dim, ErrDimension)
		}
		contiguous = contiguous && &r[0] == &all[i*dim]
	}
	if contiguous {
		return all[: len(rows)*dim : len(rows)*dim], dim, nil
	}
	data = make([]float32, 0, len(rows)*dim)
	for _, r := range rows {
		data = append(data, r...)
	}
	return data, dim, nil
}

// Dot returns the dot product of a and b, which must have the same length. It uses vek32's AVX2/FMA kernel
// where the CPU has one (about ten times faster than an unrolled Go loop at 1024 dimensions) and its pure-Go
// loop otherwise.
func Dot(a, b []float32) float32 {
	if len(a) == 0 {
		return 0
	}
	return vek32.Dot(a, b[:len(a)])
}

// topK keeps the k best hits seen in a bounded min-heap whose root is the worst kept hit.
type topK struct {
	k int
	h []Hit
}

func newTopK(k int) *topK { return &topK{k: k, h: make([]Hit, 0, k)} }

// worse reports whether a ranks below b: a lower score, or an equal score and a larger ID.
func worse(a, b Hit) bool {
	if a.Score != b.Score {
		return a.Score < b.Score
	}
	return a.ID > b.ID
}

// full reports whether k hits are kept; then only a hit better than the worst kept one (t.h[0]) enters.
func (t *topK) full() bool { return len(t.h) == t.k }

func (t *topK) push(x Hit) {
	if len(t.h) < t.k {
		t.h = append(t.h, x)
		for i := len(t.h) - 1; i > 0; {
			p := (i - 1) / 2
			if !worse(t.h[i], t.h[p]) {
				break
			}
			t.h[i], t.h[p] = t.h[p], t.h[i]
			i = p
		}
		return
	}
	if !worse(t.h[0], x) {
		return
	}
	t.h[0] = x
	for i, n := 0, len(t.h); ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < n && worse(t.h[l], t.h[m]) {
			m = l
		}
		if r < n && worse(t.h[r], t.h[m]) {
			m = r
		}
		if m == i {
			break
		}
		t.h[i], t.h[m] = t.h[m], t.h[i]
		i = m
	}
}

// sorted returns the kept hits best first.
func (t *topK) sorted() []Hit {
	sort.Slice(t.h, func(i, j int) bool { return worse(t.h[j], t.h[i]) })
	return t.h
}
