// Package leiden finds communities in graphs with the Leiden algorithm (Traag, Waltman & van Eck, "From
// Louvain to Leiden: guaranteeing well-connected communities", Scientific Reports 9, 5233, 2019), maximising
// modularity with a resolution parameter, and assigns the communities of a site's page link graph the way
// the FHNW prototype does (weakly connected components; small components get index.SmallComponentCommunity).
//
// Each iteration of Run has the three phases of the paper: fast local moving of nodes with a queue; a
// refinement that merges nodes only within their community and only into well-connected subcommunities,
// chosen at random with probability exp(ΔQ/θ); and aggregation of the graph by the refined partition, with
// the unrefined partition as the starting point on the aggregate graph. Iterations repeat until the
// partition is stable. Unlike Louvain, every community it returns is connected.
//
// Results are deterministic for a given Config.Seed. All functions are safe for concurrent use on graphs
// that are not being modified.
package leiden

import (
	"math"
	"math/rand/v2"
	"slices"
)

// Config tunes Run. The zero value is the usual modularity setting.
type Config struct {
	// Resolution is γ in Q = 1/2m Σ (A_ij − γ k_i k_j / 2m) δ(c_i, c_j). Default 1; larger values give
	// more, smaller communities; a tiny positive value merges each connected component into one.
	Resolution float64
	// Randomness is θ, the temperature of the refinement's random merges. Default 0.01, as in the paper.
	Randomness float64
	// Seed seeds the random source (math/rand/v2 PCG); the same seed gives the same result.
	Seed uint64
	// MaxIterations bounds the number of Leiden iterations. Default 50. Graphs with clear communities (a
	// site's sections) are stable after a few; on structureless random graphs every iteration still finds
	// tiny gains, and this bound is what stops it.
	MaxIterations int
	// Tolerance is the modularity gain below which an iteration counts as leaving the partition unchanged.
	// Default 1e-7.
	Tolerance float64
	// StableIterations is how many consecutive iterations must leave the partition unchanged before Run
	// stops. Default 3. With 1 (leidenalg's n_iterations=-1) about 3% of seeds stop in a local optimum on
	// Zachary's karate club (Q 0.398 instead of 0.420); the refinement's randomness lets later iterations
	// escape it, and an unchanged iteration costs one pass over the edges.
	StableIterations int
}

// Result is the outcome of Run.
type Result struct {
	// Membership is the community of each node, numbered 0..k-1 by decreasing size (ties: smallest node).
	Membership []int
	// Modularity is the modularity of Membership at the configured resolution.
	Modularity float64
}

// Run partitions g into communities. A graph without edges gives every node its own community.
func Run(g *Graph, cfg Config) Result {
	if cfg.Resolution == 0 {
		cfg.Resolution = 1
	}
	if cfg.Randomness <= 0 {
		cfg.Randomness = 0.01
	}
	maxIter := cfg.MaxIterations
	if maxIter <= 0 {
		maxIter = 50
	}
	tol := cfg.Tolerance
	if tol <= 0 {
		tol = 1e-7
	}
	patience := cfg.StableIterations
	if patience <= 0 {
		patience = 3
	}
	base := g.build()
	l := &leiden{
		gamma: cfg.Resolution,
		theta: cfg.Randomness,
		rng:   rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15)),
	}
	memb := make([]int, base.n)
	for i := range memb {
		memb[i] = i
	}
	q := modularity(base, memb, l.gamma)
	if base.m > 0 {
		for i, stable := 0, 0; i < maxIter && stable < patience; i++ {
			next := l.iterate(base, memb)
			nq := modularity(base, next, l.gamma)
			gain := nq - q
			if gain >= 0 && !samePartition(memb, next) {
				memb, q = next, nq
			}
			if gain < tol {
				stable++
			} else {
				stable = 0
			}
		}
	}
	return Result{Membership: bySize(memb), Modularity: q}
}

// Modularity returns the modularity of membership (one community label per node, any non-negative ints) on
// g at the given resolution (0 means 1). It is 0 for a graph without edges. It panics if membership does not
// have one entry per node.
func Modularity(g *Graph, membership []int, resolution float64) float64 {
	if len(membership) != g.n {
		panic("leiden: Modularity: membership length differs from the number of nodes")
	}
	if resolution == 0 {
		resolution = 1
	}
	return modularity(g.build(), dense(membership), resolution)
}

func modularity(g *csr, comm []int, gamma float64) float64 {
	if g.m == 0 {
		return 0
	}
	in := make([]float64, g.n)
	tot := make([]float64, g.n)
	for u := range g.n {
		c := comm[u]
		tot[c] += g.deg[u]
		in[c] += 2 * g.self[u]
		for i := g.off[u]; i < g.off[u+1]; i++ {
			if comm[g.adj[i]] == c {
				in[c] += g.w[i]
			}
		}
	}
	q, m2 := 0.0, 2*g.m
	for c := range g.n {
		if tot[c] > 0 {
			q += in[c]/m2 - gamma*(tot[c]/m2)*(tot[c]/m2)
		}
	}
	return q
}

type leiden struct {
	gamma, theta float64
	rng          *rand.Rand
}

// maxStalls bounds how often a level may refine into singletons only before the level loop gives up; the
// refinement is random, so a retry normally succeeds.
const maxStalls = 8

// iterate runs one Leiden iteration on the original graph starting from memb (labels in 0..n-1) and
// returns the new membership.
func (l *leiden) iterate(base *csr, memb []int) []int {
	g := base
	comm := append([]int(nil), memb...)
	nodeAgg := make([]int, base.n) // node of the current aggregate graph holding each original node
	for i := range nodeAgg {
		nodeAgg[i] = i
	}
	for stalls := 0; ; {
		l.moveNodes(g, comm)
		if countDistinct(comm) == g.n {
			break // every community is a single (well-connected) aggregate node: done
		}
		refined := l.refine(g, comm)
		k := countDistinct(refined)
		if k == g.n {
			if stalls++; stalls < maxStalls {
				continue
			}
			// Keep the guarantee rather than the last few merges: communities become the aggregate nodes,
			// each of which is connected.
			for i := range comm {
				comm[i] = i
			}
			break
		}
		stalls = 0
		// Aggregate by the refined partition; start from the unrefined one.
		agg := dense(refined)
		next := make([]int, k)
		pc := dense(comm)
		for u := range g.n {
			next[agg[u]] = pc[u]
		}
		for i, a := range nodeAgg {
			nodeAgg[i] = agg[a]
		}
		g = aggregate(g, agg, k)
		comm = next
	}
	out := make([]int, base.n)
	for i, a := range nodeAgg {
		out[i] = comm[a]
	}
	return dense(out)
}

// moveNodes is MoveNodesFast: visit nodes from a queue (initially all, in random order), move each to the
// community with the largest modularity gain if that gain is positive, and requeue its neighbours outside
// the new community. comm is updated in place; labels stay in 0..n-1.
func (l *leiden) moveNodes(g *csr, comm []int) {
	n := g.n
	commDeg := make([]float64, n)
	commSize := make([]int, n)
	for u := range n {
		commDeg[comm[u]] += g.deg[u]
		commSize[comm[u]]++
	}
	var empty []int
	for c := n - 1; c >= 0; c-- {
		if commSize[c] == 0 {
			empty = append(empty, c)
		}
	}
	queue := make([]int, 0, n)
	queue = append(queue, l.rng.Perm(n)...)
	inQueue := make([]bool, n)
	for i := range inQueue {
		inQueue[i] = true
	}
	weightTo := make([]float64, n)
	seen := make([]bool, n)
	var touched []int
	scale := l.gamma / (2 * g.m)

	for head := 0; head < len(queue); head++ {
		v := queue[head]
		inQueue[v] = false
		if head > n && head*2 > len(queue) { // compact the ring so the queue stays O(n)
			queue = append(queue[:0], queue[head+1:]...)
			head = -1
		}
		cv, kv := comm[v], g.deg[v]
		touched = touched[:0]
		for i := g.off[v]; i < g.off[v+1]; i++ {
			c := comm[g.adj[i]]
			if !seen[c] {
				seen[c] = true
				touched = append(touched, c)
			}
			weightTo[c] += g.w[i]
		}
		commDeg[cv] -= kv
		commSize[cv]--
		best, bestGain := cv, weightTo[cv]-scale*kv*commDeg[cv]
		for _, c := range touched {
			if gain := weightTo[c] - scale*kv*commDeg[c]; gain > bestGain+1e-12*kv {
				best, bestGain = c, gain
			}
		}
		if bestGain < -1e-12*kv { // alone is better than any neighbouring community
			if commSize[cv] == 0 {
				best = cv
			} else {
				best, empty = empty[len(empty)-1], empty[:len(empty)-1]
			}
		}
		for _, c := range touched {
			weightTo[c], seen[c] = 0, false
		}
		commDeg[best] += kv
		commSize[best]++
		if best == cv {
			continue
		}
		if commSize[cv] == 0 {
			empty = append(empty, cv)
		}
		comm[v] = best
		for i := g.off[v]; i < g.off[v+1]; i++ {
			if u := g.adj[i]; !inQueue[u] && comm[u] != best {
				inQueue[u] = true
				queue = append(queue, u)
			}
		}
	}
}

// refine is RefinePartition with MergeNodesSubset for the modularity objective: starting from singletons,
// each well-connected singleton node v of a community S may join a well-connected subcommunity R of S that
// it is linked to, with probability proportional to exp(ΔQ/θ) over the moves with ΔQ >= 0 (staying alone
// is one of them). A set X ⊆ S is well connected when E(X, S−X) >= γ K_X (K_S − K_X) / 2m.
func (l *leiden) refine(g *csr, comm []int) []int {
	n := g.n
	scale := l.gamma / (2 * g.m)
	commDeg := make([]float64, n)
	for u := range n {
		commDeg[comm[u]] += g.deg[u]
	}
	refined := make([]int, n)
	rDeg := make([]float64, n) // K_R
	rSize := make([]int, n)    // |R|
	rCut := make([]float64, n) // E(R, S−R)
	for v := range n {
		refined[v], rDeg[v], rSize[v] = v, g.deg[v], 1
		for i := g.off[v]; i < g.off[v+1]; i++ {
			if comm[g.adj[i]] == comm[v] {
				rCut[v] += g.w[i]
			}
		}
	}
	weightTo := make([]float64, n)
	seen := make([]bool, n)
	var touched []int
	var gains []float64
	for _, v := range l.rng.Perm(n) {
		s, kv := comm[v], g.deg[v]
		if rSize[refined[v]] != 1 || rCut[v] < scale*kv*(commDeg[s]-kv) {
			continue // v already has company, or is not well connected to its community
		}
		touched = touched[:0]
		for i := g.off[v]; i < g.off[v+1]; i++ {
			if u := g.adj[i]; comm[u] == s {
				r := refined[u]
				if !seen[r] {
					seen[r] = true
					touched = append(touched, r)
				}
				weightTo[r] += g.w[i]
			}
		}
		// Candidates: well-connected subcommunities with a non-negative gain; index 0 is staying alone.
		cands := append(touched[:0:0], v)
		gains = append(gains[:0], 0)
		maxGain := 0.0
		for _, r := range touched {
			if r == v || rCut[r] < scale*rDeg[r]*(commDeg[s]-rDeg[r]) {
				continue
			}
			gain := (weightTo[r] - scale*kv*rDeg[r]) / g.m // ΔQ of moving v into r
			if gain >= 0 {
				cands = append(cands, r)
				gains = append(gains, gain)
				maxGain = max(maxGain, gain)
			}
		}
		chosen := v
		if len(cands) > 1 {
			total := 0.0
			for i := range gains {
				gains[i] = math.Exp((gains[i] - maxGain) / l.theta)
				total += gains[i]
			}
			x := l.rng.Float64() * total
			for i, p := range gains {
				if x -= p; x < 0 || i == len(gains)-1 {
					chosen = cands[i]
					break
				}
			}
		}
		if chosen != v {
			w := weightTo[chosen]
			refined[v] = chosen
			rSize[chosen]++
			rSize[v] = 0
			rDeg[chosen] += kv
			rCut[chosen] += rCut[v] - 2*w
		}
		for _, r := range touched {
			weightTo[r], seen[r] = 0, false
		}
	}
	return refined
}

// aggregate returns the graph whose nodes are the k communities of part: edge weights between communities
// are summed, and weight inside a community becomes its self-loop.
func aggregate(g *csr, part []int, k int) *csr {
	b := newBuilder(k, len(g.adj)/2)
	for u := range g.n {
		cu := part[u]
		b.self[cu] += g.self[u]
		for i := g.off[u]; i < g.off[u+1]; i++ {
			if v := g.adj[i]; u < v {
				b.add(cu, part[v], g.w[i])
			}
		}
	}
	return b.finish()
}

// dense relabels a partition 0..k-1 in order of first appearance.
func dense(memb []int) []int {
	ids := make(map[int]int, 16)
	out := make([]int, len(memb))
	for i, c := range memb {
		id, ok := ids[c]
		if !ok {
			id = len(ids)
			ids[c] = id
		}
		out[i] = id
	}
	return out
}

func countDistinct(memb []int) int {
	seen := make([]bool, len(memb))
	k := 0
	for _, c := range memb {
		if !seen[c] {
			seen[c] = true
			k++
		}
	}
	return k
}

// samePartition reports whether two memberships group the nodes identically, whatever their labels.
func samePartition(a, b []int) bool {
	return slices.Equal(dense(a), dense(b))
}

// bySize relabels communities 0..k-1 by decreasing size, ties broken by their smallest node.
func bySize(memb []int) []int {
	d := dense(memb) // first appearance order = smallest node order
	size := make([]int, countDistinct(d))
	for _, c := range d {
		size[c]++
	}
	order := make([]int, len(size))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return size[b] - size[a] })
	rank := make([]int, len(size))
	for r, c := range order {
		rank[c] = r
	}
	for i, c := range d {
		d[i] = rank[c]
	}
	return d
}
