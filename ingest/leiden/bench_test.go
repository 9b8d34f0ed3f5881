package leiden

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// linkGraph returns n pages with about m directed links, most of them inside sections of 40 pages, the
// rest across the site: a stand-in for a site's link graph.
func linkGraph(n, m int, seed uint64) [][]int {
	r := rand.New(rand.NewPCG(seed, 3))
	links := make([][]int, n)
	for range m {
		u := r.IntN(n)
		v := r.IntN(n)
		if r.Float64() < 0.8 {
			v = (u/40*40 + r.IntN(40)) % n
		}
		links[u] = append(links[u], v)
	}
	return links
}

func BenchmarkRun(b *testing.B) {
	for _, size := range []struct{ n, m int }{{800, 20_000}, {10_000, 100_000}} {
		b.Run(fmt.Sprintf("n=%d/m=%d", size.n, size.m), func(b *testing.B) {
			links := linkGraph(size.n, size.m, 1)
			g := NewGraph(size.n)
			for u, out := range links {
				for _, v := range out {
					g.AddEdge(u, v, 1)
				}
			}
			b.ReportAllocs()
			var res Result
			for b.Loop() {
				res = Run(g, Config{Seed: 1})
			}
			b.ReportMetric(res.Modularity, "modularity")
			b.ReportMetric(float64(maxOf(res.Membership)+1), "communities")
		})
	}
}

func BenchmarkRunUniformRandom10k(b *testing.B) {
	tg := randomGraph(10_000, 100_000, 1)
	g := tg.graph()
	b.ReportAllocs()
	var res Result
	for b.Loop() {
		res = Run(g, Config{Seed: 1})
	}
	b.ReportMetric(res.Modularity, "modularity")
	b.ReportMetric(float64(maxOf(res.Membership)+1), "communities")
}

// BenchmarkCommunities is the pipeline step at the Berkeley link graph's scale (~800 pages, ~20k links).
func BenchmarkCommunities(b *testing.B) {
	links := linkGraph(800, 20_000, 2)
	b.ReportAllocs()
	var a Assignment
	for b.Loop() {
		a = Communities(len(links), links, CommunityConfig{})
	}
	b.ReportMetric(a.Modularity, "modularity")
	b.ReportMetric(float64(a.Communities), "communities")
}
