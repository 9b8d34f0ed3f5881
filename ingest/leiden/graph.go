package leiden

import (
	"fmt"
	"math"
)

// Graph is an undirected weighted graph on nodes 0..n-1, built with NewGraph and AddEdge. Parallel edges add
// their weights; a self-loop of weight w adds 2w to its node's degree, as in the configuration model.
// A Graph is not safe for concurrent mutation; Run and Modularity only read it.
type Graph struct {
	n     int
	edges []edge
}

type edge struct {
	u, v int
	w    float64
}

// NewGraph returns a graph of n nodes and no edges.
func NewGraph(n int) *Graph {
	if n < 0 {
		panic(fmt.Sprintf("leiden: NewGraph(%d): negative size", n))
	}
	return &Graph{n: n}
}

// AddEdge adds an undirected edge of weight w between u and v. Edges of weight 0 are ignored. It panics
// when u or v is out of range or w is negative, infinite or NaN, like an out-of-range slice index.
func (g *Graph) AddEdge(u, v int, w float64) {
	if u < 0 || u >= g.n || v < 0 || v >= g.n {
		panic(fmt.Sprintf("leiden: AddEdge(%d, %d): node out of range [0, %d)", u, v, g.n))
	}
	if w < 0 || math.IsInf(w, 0) || math.IsNaN(w) {
		panic(fmt.Sprintf("leiden: AddEdge(%d, %d): invalid weight %v", u, v, w))
	}
	if w > 0 {
		g.edges = append(g.edges, edge{u, v, w})
	}
}

// csr is the compact adjacency form the algorithm works on: for node u, its distinct neighbours other than
// itself are adj[off[u]:off[u+1]] with weights w[...]; self holds the self-loop weight.
type csr struct {
	n    int
	off  []int
	adj  []int
	w    []float64
	self []float64
	deg  []float64 // strength: incident weights, self-loops counted twice
	m    float64   // total edge weight: sum(deg)/2
}

// build returns the adjacency of g with parallel edges merged.
func (g *Graph) build() *csr {
	b := newBuilder(g.n, len(g.edges))
	for _, e := range g.edges {
		b.add(e.u, e.v, e.w)
	}
	return b.finish()
}

// builder collects undirected edges and merges duplicates into a csr in linear time.
type builder struct {
	n     int
	count []int
	us    []int
	vs    []int
	ws    []float64
	self  []float64
}

func newBuilder(n, edges int) *builder {
	return &builder{n: n, count: make([]int, n+1), self: make([]float64, n),
		us: make([]int, 0, edges), vs: make([]int, 0, edges), ws: make([]float64, 0, edges)}
}

func (b *builder) add(u, v int, w float64) {
	if u == v {
		b.self[u] += w
		return
	}
	b.us = append(b.us, u)
	b.vs = append(b.vs, v)
	b.ws = append(b.ws, w)
	b.count[u]++
	b.count[v]++
}

func (b *builder) finish() *csr {
	n := b.n
	g := &csr{n: n, off: make([]int, n+1), self: b.self, deg: make([]float64, n)}
	for u := range n {
		g.off[u+1] = g.off[u] + b.count[u]
	}
	adj := make([]int, g.off[n])
	w := make([]float64, g.off[n])
	fill := append([]int(nil), g.off[:n]...)
	for i, u := range b.us {
		v, wt := b.vs[i], b.ws[i]
		adj[fill[u]], w[fill[u]] = v, wt
		fill[u]++
		adj[fill[v]], w[fill[v]] = u, wt
		fill[v]++
	}
	// Merge parallel edges in place, node by node, with a last-seen table.
	slot := make([]int, n)
	for i := range slot {
		slot[i] = -1
	}
	out := 0
	for u := range n {
		start := out
		for i := g.off[u]; i < g.off[u+1]; i++ {
			v := adj[i]
			if s := slot[v]; s >= start {
				w[s] += w[i]
				continue
			}
			slot[v] = out
			adj[out], w[out] = v, w[i]
			out++
		}
		g.off[u] = start
	}
	g.off[n] = out
	g.adj, g.w = adj[:out], w[:out]
	for u := range n {
		d := 2 * g.self[u]
		for i := g.off[u]; i < g.off[u+1]; i++ {
			d += g.w[i]
		}
		g.deg[u] = d
		g.m += d
	}
	g.m /= 2
	return g
}
